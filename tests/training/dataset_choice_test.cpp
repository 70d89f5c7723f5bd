// The datasets imerge-train opens by name. Here: an image folder's pixel limit follows
// --image-size, so a tiny file whose header claims a huge image (a decompression bomb) is
// refused before it is decoded, while --max-image-pixels lets a user raise the limit.
#include "training/dataset_choice.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "support/error_text.h"
#include "support/png_header.h"
#include "support/source_tree.h"
#include "support/temp_dir.h"

namespace imerge::training {
namespace {

namespace fs = std::filesystem;
using testing::errorMessage;
using testing::expectContains;

const fs::path kImages =
    testing::sourceTree() / "tests" / "data" / "fixtures" / "image_folder" / "ant";

// <root>/{train,val}/ant/a0.png (8 x 8, real) and <root>/train/ant/claims-2000.png, a header
// declaring 2000 x 2000 = 4,000,000 pixels: above the limit at --image-size 32 (1024^2 =
// 1,048,576), below it at 64 (2048^2 = 4,194,304).
fs::path folderWithAHugeHeader(const testing::TempDir& dir) {
  for (const char* split : {"train", "val"}) {
    fs::create_directories(dir.path() / split / "ant");
    fs::copy_file(kImages / "a0.png", dir.path() / split / "ant" / "a0.png");
  }
  testing::writePngHeaderOnly(dir.path() / "train" / "ant" / "claims-2000.png", 2000, 2000);
  return dir.path();
}

TEST(DatasetChoice, TheImagePixelLimitIs32TimesTheImageSizeSquared) {
  EXPECT_EQ(defaultMaxImagePixels(224), 7168 * 7168);
  EXPECT_EQ(defaultMaxImagePixels(32), 1024 * 1024);
}

TEST(DatasetChoice, AnImageFolderRefusesAHeaderAboveThePixelLimitOfItsImageSize) {
  testing::TempDir dir("dataset-choice-bomb");
  const fs::path root = folderWithAHugeHeader(dir);
  const fs::path huge = root / "train" / "ant" / "claims-2000.png";
  DatasetChoice choice{
      .name = "imagenet-folder", .directory = root.string(), .imageSize = 32, .strict = true};
  const std::string message = errorMessage([&] { openDatasets(choice); });
  expectContains(message, "cannot decode image " + huge.string() +
                              ": its header declares 2000x2000 pixels, more than the 1048576 "
                              "this reader decodes (--max-image-pixels raises the limit)");

  // Not strict: skipped, with the same reason, and the real image kept.
  choice.strict = false;
  EXPECT_EQ(openDatasets(choice).train->size(), 1);

  // The limit follows the image size, and the flag overrides it both ways. The header passes
  // the scan then (it fails only when decoded, as a truncated file does).
  choice.strict = true;
  choice.imageSize = 64;
  EXPECT_EQ(openDatasets(choice).train->size(), 2);
  choice.maxImagePixels = 3'999'999;
  expectContains(errorMessage([&] { openDatasets(choice); }), "more than the 3999999");
  choice.imageSize = 32;
  choice.maxImagePixels = 4'000'000;
  EXPECT_EQ(openDatasets(choice).train->size(), 2);
}

}  // namespace
}  // namespace imerge::training
