// The in-memory datasets: MNIST-format IDX and CIFAR-10 binary on the committed fixtures (exact
// values, written by make_idx_fixtures.py and make_fixtures.py), their bad-input errors, and
// synthetic data.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "data/cifar10.h"
#include "data/idx_dataset.h"
#include "data/synthetic.h"
#include "support/error_text.h"
#include "support/source_tree.h"
#include "support/temp_dir.h"

namespace imerge::data {
namespace {

namespace fs = std::filesystem;
using testing::errorMessage;
using testing::expectContains;

const fs::path kFixtures = testing::sourceTree() / "tests" / "data" / "fixtures";

using testing::TempDir;

void truncateCopy(const fs::path& from, const fs::path& to, uintmax_t bytes) {
  fs::copy_file(from, to, fs::copy_options::overwrite_existing);
  fs::resize_file(to, bytes);
}

// ---- IDX ----------------------------------------------------------------------------------

// An IDX labels file (magic 00 00 08 01, big-endian count, one byte per label).
void writeIdxLabels(const fs::path& path, const std::vector<uint8_t>& labels) {
  const auto count = static_cast<uint32_t>(labels.size());
  std::vector<char> bytes = {0, 0, 0x08, 1};
  for (int shift : {24, 16, 8, 0}) bytes.push_back(static_cast<char>((count >> shift) & 0xff));
  bytes.insert(bytes.end(), labels.begin(), labels.end());
  std::ofstream(path, std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// The tiny fixture's three images under <dir>/<split>-*, with these labels.
void writeTinySplit(const fs::path& dir, const std::string& split,
                    const std::vector<uint8_t>& labels) {
  fs::copy_file(kFixtures / "tiny-images-idx3-ubyte.gz", dir / (split + "-images-idx3-ubyte.gz"));
  writeIdxLabels(dir / (split + "-labels-idx1-ubyte"), labels);
}

TEST(IdxImageDataset, ReadsTheTinyFixtureAsTrainAndTest) {
  TempDir dir("idx-dataset");
  for (const char* split : {"train", "t10k"}) writeTinySplit(dir.path(), split, {7, 0, 9});
  const IdxImageDataset train("fashion-mnist", dir.path().string(), "train");
  const IdxImageDataset test("mnist", dir.path().string(), "test");
  EXPECT_EQ(train.size(), 3);
  EXPECT_EQ(test.size(), 3);
  EXPECT_EQ(train.imageShape(), (Shape{1, 2, 3}));
  EXPECT_EQ(train.classes(), 10);
  Generator generator(0);
  const Example second = train.get(1, generator);
  EXPECT_EQ(second.label, 0);
  EXPECT_EQ(second.image.shape(), (Shape{1, 2, 3}));
  EXPECT_EQ(second.image.toVector(),
            (std::vector<float>{10 / 255.0f, 20 / 255.0f, 30 / 255.0f, 128 / 255.0f, 200 / 255.0f,
                                254 / 255.0f}));
  EXPECT_EQ(train.get(2, generator).label, 9);
  expectContains(train.describe(), "fashion-mnist train (3 images");
}

// One label of 200 used to make a 201-class model without a word; a bad label in the test split
// was found only after a whole training epoch. Both are refused when the dataset opens.
TEST(IdxImageDataset, ALabelOutsideTheTenClassesIsRefusedNamingTheFileAndRecord) {
  TempDir dir("idx-bad-label");
  writeTinySplit(dir.path(), "train", {7, 200, 9});
  writeTinySplit(dir.path(), "t10k", {7, 0, 10});
  const std::string train =
      errorMessage([&] { IdxImageDataset("fashion-mnist", dir.path().string(), "train"); });
  expectContains(train, (dir.path() / "train-labels-idx1-ubyte").string() +
                            ": record 1 has label 200 but fashion-mnist labels are 0..9");
  const std::string test =
      errorMessage([&] { IdxImageDataset("mnist", dir.path().string(), "test"); });
  expectContains(test, (dir.path() / "t10k-labels-idx1-ubyte").string() +
                           ": record 2 has label 10 but mnist labels are 0..9");
}

TEST(IdxImageDataset, AppliesItsTransform) {
  TempDir dir("idx-transform");
  writeTinySplit(dir.path(), "train", {7, 0, 9});
  const IdxImageDataset padded("mnist", dir.path().string(), "train", centerCrop(4, 5));
  EXPECT_EQ(padded.imageShape(), (Shape{1, 4, 5}));
  Generator generator(0);
  const std::vector<float> values = padded.get(0, generator).image.toVector();
  EXPECT_EQ(values[0], 0.0f);                // padding
  EXPECT_EQ(values[5 + 1 + 2], 2 / 255.0f);  // row 1 of the output is row 0 of the image
}

TEST(IdxImageDataset, BadNamesSplitsAndDirectoriesAreClearErrors) {
  expectContains(errorMessage([] { IdxImageDataset("kmnist", "/tmp", "train"); }),
                 "unknown IDX dataset \"kmnist\"");
  expectContains(errorMessage([] { IdxImageDataset("mnist", "/tmp", "validation"); }),
                 "unknown split \"validation\"");
  const std::string missing =
      errorMessage([] { IdxImageDataset("mnist", "/no/such/dir", "train"); });
  expectContains(missing, "/no/such/dir/train-images-idx3-ubyte");
}

TEST(IdxImageDataset, RealFashionMnistWhenInstalled) {
  if (!fs::exists(fs::path(kFashionMnistDirectory) / "t10k-images-idx3-ubyte.gz")) {
    GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  }
  const IdxImageDataset test("fashion-mnist", kFashionMnistDirectory, "test");
  EXPECT_EQ(test.size(), 10000);
  EXPECT_EQ(test.classes(), 10);
  EXPECT_EQ(test.imageShape(), (Shape{1, 28, 28}));
}

// ---- CIFAR-10 -----------------------------------------------------------------------------

// make_fixtures.py: byte j of record r's pixels is (7 r + 3 j) mod 256.
float cifarPixel(int record, int byte) {
  return static_cast<float>((record * 7 + byte * 3) % 256) / 255.0f;
}

void expectCifarRecord(const Example& example, int record, int64_t label) {
  EXPECT_EQ(example.label, label);
  ASSERT_EQ(example.image.shape(), (Shape{3, 32, 32}));
  const std::vector<float> values = example.image.toVector();
  for (int j = 0; j < 3072; ++j) {
    ASSERT_EQ(values[static_cast<size_t>(j)], cifarPixel(record, j))
        << "record " << record << " byte " << j;
  }
}

TEST(Cifar10Dataset, ReadsTestAndTrainSplitsExactly) {
  const Cifar10Dataset test((kFixtures / "cifar10").string(), "test");
  ASSERT_EQ(test.size(), 3);
  EXPECT_EQ(test.classes(), 10);
  EXPECT_EQ(test.imageShape(), (Shape{3, 32, 32}));
  Generator generator(0);
  const int64_t labels[] = {3, 0, 9};
  for (int record = 0; record < 3; ++record) {
    expectCifarRecord(test.get(record, generator), record, labels[record]);
  }
  // Five training files of one record each: record 10 + b with label b, in file order.
  const Cifar10Dataset train((kFixtures / "cifar10").string(), "train");
  ASSERT_EQ(train.size(), 5);
  for (int batch = 1; batch <= 5; ++batch) {
    expectCifarRecord(train.get(batch - 1, generator), 10 + batch, batch);
  }
}

TEST(Cifar10Dataset, FindsTheArchiveFolderAndAppliesTransforms) {
  TempDir dir("cifar-archive");
  fs::create_directories(dir.path() / "cifar-10-batches-bin");
  fs::copy_file(kFixtures / "cifar10" / "test_batch.bin",
                dir.path() / "cifar-10-batches-bin" / "test_batch.bin");
  const Cifar10Dataset test(dir.path().string(), "test", randomCrop(32, 32, 4));
  EXPECT_EQ(test.size(), 3);
  expectContains(test.describe(), "cifar-10-batches-bin");
  expectContains(test.describe(), "randomCrop(32x32, padding 4)");
}

TEST(Cifar10Dataset, BadInputNamesTheFile) {
  expectContains(errorMessage([] { Cifar10Dataset("/no/such/cifar", "test"); }),
                 "data directory /no/such/cifar does not exist");
  expectContains(errorMessage([] { Cifar10Dataset((kFixtures / "cifar10").string(), "val"); }),
                 "unknown split \"val\"");

  TempDir dir("cifar-bad");
  const fs::path missing = dir.path() / "test_batch.bin";
  expectContains(errorMessage([&] { Cifar10Dataset(dir.path().string(), "test"); }),
                 "cannot open " + missing.string());

  const fs::path truncated = dir.path() / "test_batch.bin";
  truncateCopy(kFixtures / "cifar10" / "test_batch.bin", truncated, 3073 * 2 + 100);
  const std::string message = errorMessage([&] { Cifar10Dataset(dir.path().string(), "test"); });
  expectContains(message, truncated.string() + " is truncated");
  expectContains(message, "2 complete records and 100 bytes left over");

  truncateCopy(kFixtures / "cifar10" / "test_batch.bin", truncated, 0);
  expectContains(errorMessage([&] { Cifar10Dataset(dir.path().string(), "test"); }),
                 truncated.string() + " is empty");

  // A label byte of 12: not CIFAR-10 (CIFAR-100 files have two label bytes).
  std::vector<char> record(3073, 0);
  record[0] = 12;
  std::ofstream(truncated, std::ios::binary).write(record.data(), 3073);
  expectContains(errorMessage([&] { Cifar10Dataset(dir.path().string(), "test"); }),
                 truncated.string() + ": record 0 has label 12");
}

// A batch file larger than 100000 records is refused from its size, before it is read (a
// sparse file: no disk used).
TEST(Cifar10Dataset, AFileFarLargerThanABatchIsRefusedBeforeReading) {
  testing::TempDir dir("cifar-huge");
  const std::filesystem::path batch = dir.path() / "test_batch.bin";
  std::ofstream(batch).close();
  std::filesystem::resize_file(batch, uint64_t{400} << 20);
  const std::string message =
      testing::errorMessage([&] { Cifar10Dataset(dir.path().string(), "test"); });
  testing::expectContains(message,
                          batch.string() + " has 419430400 bytes, more than the 307300000");
}

// ---- synthetic ----------------------------------------------------------------------------

TEST(SyntheticDataset, ExamplesArePureFunctionsOfSeedAndIndex) {
  const SyntheticDataset data(100, {3, 5, 7}, 4, 42);
  EXPECT_EQ(data.size(), 100);
  EXPECT_EQ(data.imageShape(), (Shape{3, 5, 7}));
  Generator a(1), b(2);
  const Example first = data.get(17, a);
  const Example again = data.get(17, b);  // another generator: same content
  EXPECT_EQ(first.image.toVector(), again.image.toVector());
  EXPECT_EQ(first.label, again.label);
  EXPECT_NE(data.get(18, a).image.toVector(), first.image.toVector());
  EXPECT_NE(SyntheticDataset(100, {3, 5, 7}, 4, 43).get(17, a).image.toVector(),
            first.image.toVector());
  std::vector<int> seen(4, 0);
  for (int64_t i = 0; i < 100; ++i) {
    const Example example = data.get(i, a);
    ASSERT_GE(example.label, 0);
    ASSERT_LT(example.label, 4);
    ++seen[static_cast<size_t>(example.label)];
    for (float value : example.image.toVector()) {
      ASSERT_GE(value, 0.0f);
      ASSERT_LT(value, 1.0f);
    }
  }
  for (int count : seen) EXPECT_GT(count, 0);
}

TEST(SyntheticDataset, TransformsAndBadShapes) {
  const SyntheticDataset cropped(4, {3, 8, 8}, 2, 0, centerCrop(4, 4));
  EXPECT_EQ(cropped.imageShape(), (Shape{3, 4, 4}));
  Generator generator(0);
  EXPECT_EQ(cropped.get(0, generator).image.shape(), (Shape{3, 4, 4}));
  expectContains(errorMessage([] {
                   SyntheticDataset(4, {8, 8}, 2);
                 }),
                 "image shape must be [C, H, W]");
  expectContains(errorMessage([] { SyntheticDataset(0, {1, 8, 8}, 2); }), "size must be positive");
  expectContains(errorMessage([&] { cropped.get(4, generator); }), "index 4 out of range");
}

}  // namespace
}  // namespace imerge::data
