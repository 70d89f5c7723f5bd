// Image folders: class mapping and file order as torchvision's ImageFolder, exact PNG pixels and
// near JPEG ones (fixtures by make_fixtures.py), and every kind of bad input: a missing or empty
// folder, a class without images, a corrupt and a truncated image (skipped with a warning that
// names the file and counted, or an error naming it in strict mode), also through the
// DataLoader.
#include "data/image_folder.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <vector>

#include "data/data_loader.h"
#include "support/error_text.h"
#include "support/png_header.h"
#include "support/source_tree.h"
#include "support/temp_dir.h"

namespace imerge::data {
namespace {

namespace fs = std::filesystem;
using testing::errorMessage;
using testing::expectContains;

const fs::path kFolder = testing::sourceTree() / "tests" / "data" / "fixtures" / "image_folder";

using testing::TempDir;

// Collects warnings; the dataset calls it from worker threads.
struct Warnings {
  std::mutex mutex;
  std::vector<std::string> lines;
  std::function<void(const std::string&)> sink() {
    return [this](const std::string& line) {
      std::lock_guard lock(mutex);
      lines.push_back(line);
    };
  }
};

// make_fixtures.py's pattern: (30 x, 30 y, 10 (x + y)) at column x, row y.
float pattern(int channel, int x, int y) {
  const int values[3] = {x * 30, y * 30, (x + y) * 10};
  return static_cast<float>(values[channel]) / 255.0f;
}

// A copy of the fixture folder with extra files, for the bad-input tests.
fs::path copyFixtures(const TempDir& dir) {
  const fs::path root = dir.path() / "images";
  fs::copy(kFolder, root, fs::copy_options::recursive);
  return root;
}

TEST(ImageFolderDataset, ClassesAndFilesSortedByName) {
  const ImageFolderDataset data(kFolder.string());
  EXPECT_EQ(data.classNames(), (std::vector<std::string>{"ant", "bee"}));
  ASSERT_EQ(data.size(), 4);  // notes.txt is not an image
  const char* names[] = {"ant/a0.png", "ant/a1.jpg", "bee/b0.png", "bee/b1.jpeg"};
  const int64_t labels[] = {0, 0, 1, 1};
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_EQ(data.path(i), (kFolder / names[i]).string());
    EXPECT_EQ(data.label(i), labels[i]);
  }
  EXPECT_EQ(data.classes(), 2);
  EXPECT_EQ(data.imageShape(), (Shape{3, 8, 8}));
  EXPECT_EQ(data.skippedExamples(), 0);
}

TEST(ImageFolderDataset, PngPixelsAreExact) {
  const ImageFolderDataset data(kFolder.string());
  Generator generator(0);
  const Example rgb = data.get(0, generator);
  EXPECT_EQ(rgb.label, 0);
  ASSERT_EQ(rgb.image.shape(), (Shape{3, 8, 8}));
  const std::vector<float> values = rgb.image.toVector();
  for (int c = 0; c < 3; ++c) {
    for (int y = 0; y < 8; ++y) {
      for (int x = 0; x < 8; ++x) {
        ASSERT_EQ(values[static_cast<size_t>((c * 8 + y) * 8 + x)], pattern(c, x, y))
            << "channel " << c << " at " << x << ", " << y;
      }
    }
  }
  // Greyscale x * 8 + y * 4, replicated into the three channels.
  const std::vector<float> grey = data.get(2, generator).image.toVector();
  for (int c = 0; c < 3; ++c) {
    for (int y = 0; y < 8; ++y) {
      for (int x = 0; x < 8; ++x) {
        ASSERT_EQ(grey[static_cast<size_t>((c * 8 + y) * 8 + x)],
                  static_cast<float>(x * 8 + y * 4) / 255.0f);
      }
    }
  }
}

TEST(ImageFolderDataset, JpegPixelsAreClose) {
  const ImageFolderDataset data(kFolder.string());
  Generator generator(0);
  const std::vector<float> straight = data.get(1, generator).image.toVector();
  const std::vector<float> reversed = data.get(3, generator).image.toVector();
  // Quality 95 without chroma subsampling: within a few levels of the source.
  constexpr float kTolerance = 10.0f / 255.0f;
  for (int c = 0; c < 3; ++c) {
    for (int y = 0; y < 8; ++y) {
      for (int x = 0; x < 8; ++x) {
        const size_t at = static_cast<size_t>((c * 8 + y) * 8 + x);
        ASSERT_NEAR(straight[at], pattern(c, x, y), kTolerance);
        ASSERT_NEAR(reversed[at], pattern(c, 7 - x, 7 - y), kTolerance);
      }
    }
  }
}

TEST(ImageFolderDataset, GreyscaleModeAndTransforms) {
  ImageFolderOptions options;
  options.channels = 1;
  options.transform = compose({resize(4, 4), normalize({0.5f}, {0.5f})});
  const ImageFolderDataset data(kFolder.string(), options);
  EXPECT_EQ(data.imageShape(), (Shape{1, 4, 4}));
  Generator generator(0);
  const Example example = data.get(2, generator);
  EXPECT_EQ(example.image.shape(), (Shape{1, 4, 4}));
  // Resizing 8 to 4 samples at 1.5, 3.5, ...: the mean of pixels 0 and 1 (and rows 0 and 1) for
  // the first output, (x * 8 + y * 4) at x = y = 0.5, that is 6 / 255, then normalised.
  EXPECT_NEAR(example.image.toVector()[0], (6.0f / 255.0f - 0.5f) / 0.5f, 1e-6f);
}

TEST(ImageFolderDataset, MissingOrEmptyFoldersAreClearErrors) {
  expectContains(errorMessage([] { ImageFolderDataset("/no/such/images"); }),
                 "image folder /no/such/images does not exist");
  TempDir dir("image-folder-empty");
  const std::string empty = errorMessage([&] { ImageFolderDataset(dir.path().string()); });
  expectContains(empty, dir.path().string() + " has no class sub-folders");
  expectContains(empty, "root/<class>/<image>");
  fs::create_directories(dir.path() / "cat");
  std::ofstream(dir.path() / "cat" / "readme.txt") << "no images here";
  expectContains(errorMessage([&] { ImageFolderDataset(dir.path().string()); }),
                 "class folder " + (dir.path() / "cat").string() + " holds no .jpg");
  expectContains(errorMessage([&] {
                   ImageFolderOptions options;
                   options.channels = 2;
                   ImageFolderDataset(kFolder.string(), options);
                 }),
                 "channels must be 1 or 3");
}

TEST(ImageFolderDataset, CorruptImageIsSkippedWithAWarningAndCounted) {
  TempDir dir("image-folder-corrupt");
  const fs::path root = copyFixtures(dir);
  const fs::path corrupt = root / "ant" / "a2.jpg";
  std::ofstream(corrupt) << "this is not a JPEG";
  Warnings warnings;
  ImageFolderOptions options;
  options.warn = warnings.sink();
  const ImageFolderDataset data(root.string(), options);
  EXPECT_EQ(data.size(), 4);
  EXPECT_EQ(data.skippedExamples(), 1);
  ASSERT_EQ(warnings.lines.size(), 1u);
  expectContains(warnings.lines[0], "skipping image " + corrupt.string());

  options.strict = true;
  const std::string message = errorMessage([&] { ImageFolderDataset(root.string(), options); });
  expectContains(message, "cannot decode image " + corrupt.string());
  expectContains(message, "strict");
}

// A PNG whose header declares 10000 x 10000 pixels (100 megapixels, 300 MB to decode) is bad
// from its header alone: skipped at the scan, or refused in strict mode, never decoded. (stb
// itself refuses headers of more than 1 GiB of pixels.)
TEST(ImageFolderDataset, AnImageDeclaringTooManyPixelsIsRefusedFromItsHeader) {
  TempDir dir("image-folder-huge");
  const fs::path root = copyFixtures(dir);
  const fs::path huge = root / "ant" / "huge.png";
  testing::writePngHeaderOnly(huge, 10000, 10000);
  Warnings warnings;
  ImageFolderOptions options;
  options.warn = warnings.sink();
  const ImageFolderDataset data(root.string(), options);
  EXPECT_EQ(data.skippedExamples(), 1);
  ASSERT_EQ(warnings.lines.size(), 1u);
  expectContains(warnings.lines[0], huge.string());
  expectContains(warnings.lines[0], "10000x10000 pixels, more than the 67108864");
  options.strict = true;
  expectContains(errorMessage([&] { ImageFolderDataset(root.string(), options); }),
                 "cannot decode image " + huge.string() + ": its header declares 10000x10000");
}

TEST(ImageFolderDataset, TruncatedImageIsReplacedByTheNextOneWithAWarning) {
  TempDir dir("image-folder-truncated");
  const fs::path root = copyFixtures(dir);
  // The header survives, the scan data does not: found at decode time, not when listing.
  const fs::path truncated = root / "ant" / "a1.jpg";
  fs::resize_file(truncated, fs::file_size(truncated) / 2);
  Warnings warnings;
  ImageFolderOptions options;
  options.warn = warnings.sink();
  const ImageFolderDataset data(root.string(), options);
  ASSERT_EQ(data.size(), 4);
  EXPECT_EQ(data.skippedExamples(), 0);
  Generator generator(0);
  const Example replaced = data.get(1, generator);  // a1.jpg -> b0.png, the next index
  const Example next = data.get(2, generator);
  EXPECT_EQ(replaced.label, 1);
  EXPECT_EQ(replaced.image.toVector(), next.image.toVector());
  EXPECT_EQ(data.skippedExamples(), 1);
  data.get(1, generator);  // warned once per file
  ASSERT_EQ(warnings.lines.size(), 1u);
  expectContains(warnings.lines[0], "skipping image " + truncated.string());
  EXPECT_EQ(data.skippedFiles(), (std::vector<std::string>{truncated.string()}));

  options.strict = true;
  const ImageFolderDataset strict(root.string(), options);
  expectContains(errorMessage([&] { strict.get(1, generator); }),
                 "cannot decode image " + truncated.string());
}

TEST(ImageFolderDataset, DataLoaderReportsSkippedImagesOrFailsInStrictMode) {
  TempDir dir("image-folder-loader");
  const fs::path root = copyFixtures(dir);
  const fs::path truncated = root / "bee" / "b1.jpeg";
  fs::resize_file(truncated, fs::file_size(truncated) / 2);
  Warnings warnings;
  ImageFolderOptions folderOptions;
  folderOptions.warn = warnings.sink();
  DataLoaderOptions loaderOptions;
  loaderOptions.batchSize = 2;
  loaderOptions.workers = 2;
  loaderOptions.warn = warnings.sink();
  {
    DataLoader loader(std::make_shared<ImageFolderDataset>(root.string(), folderOptions),
                      loaderOptions);
    Batch batch;
    int64_t images = 0;
    while (loader.next(batch)) images += batch.images.dim(0);
    EXPECT_EQ(images, 4);  // the batch keeps its size
  }
  ASSERT_EQ(warnings.lines.size(), 2u);
  expectContains(warnings.lines[0], "skipping image " + truncated.string());
  expectContains(warnings.lines[1], "1 example(s) of image folder " + root.string());

  folderOptions.strict = true;
  DataLoader strict(std::make_shared<ImageFolderDataset>(root.string(), folderOptions),
                    loaderOptions);
  const std::string message = errorMessage([&] {
    Batch batch;
    while (strict.next(batch)) {
    }
  });
  expectContains(message, "DataLoader: reading example 3");
  expectContains(message, "cannot decode image " + truncated.string());
}

}  // namespace
}  // namespace imerge::data
