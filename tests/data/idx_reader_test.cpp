// The IDX reader: exact values from the committed fixtures (plain and gzip), one error per kind
// of bad input, each naming the file, and the real Fashion-MNIST when its Debian package is in.
#include "data/idx_reader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "support/error_text.h"
#include "support/source_tree.h"

namespace imerge::data {
namespace {

namespace fs = std::filesystem;
using testing::errorMessage;
using testing::expectContains;

// Written by tests/data/make_idx_fixtures.py, which spells out the same values.
const fs::path kFixtures = testing::sourceTree() / "tests" / "data" / "fixtures";
const std::vector<uint8_t> kPixels = {0,   1,   2,   3,   4, 5,   10, 20, 30,
                                      128, 200, 254, 255, 0, 255, 17, 99, 255};
const std::vector<int64_t> kLabels = {7, 0, 255};
const fs::path kFashionMnist = "/usr/share/datasets/fashion-mnist";

std::vector<char> readBytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void writeBytes(const fs::path& path, const std::vector<char>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// An IDX file: magic 00 00 <type> <rank>, big-endian uint32 sizes, then the payload.
std::vector<char> idxBytes(uint8_t type, const std::vector<uint32_t>& sizes,
                           const std::vector<uint8_t>& payload) {
  std::vector<char> bytes = {0, 0, static_cast<char>(type), static_cast<char>(sizes.size())};
  for (uint32_t size : sizes) {
    for (int shift : {24, 16, 8, 0}) bytes.push_back(static_cast<char>((size >> shift) & 0xff));
  }
  bytes.insert(bytes.end(), payload.begin(), payload.end());
  return bytes;
}

void expectTinyImages(const Tensor& images) {
  ASSERT_EQ(images.shape(), (Shape{3, 1, 2, 3}));
  ASSERT_EQ(images.dtype(), DType::Float32);
  const std::vector<float> values = images.toVector();
  for (size_t i = 0; i < kPixels.size(); ++i) {
    // Bit-exact: the reader divides by 255 as torchvision's ToTensor does.
    EXPECT_EQ(values[i], static_cast<float>(kPixels[i]) / 255.0f) << "pixel " << i;
  }
  EXPECT_EQ(values[0], 0.0f);
  EXPECT_EQ(values[12], 1.0f);
}

void expectTinyLabels(const Tensor& labels) {
  ASSERT_EQ(labels.shape(), (Shape{3}));
  ASSERT_EQ(labels.dtype(), DType::Int64);
  const int64_t* values = labels.data<int64_t>();
  EXPECT_EQ(std::vector<int64_t>(values, values + 3), kLabels);
}

// Runs `load` and checks it throws imerge::Error whose message names `path` and contains `hint`.
template <typename Load>
void expectErrorNaming(Load load, const fs::path& path, const std::string& hint) {
  SCOPED_TRACE("loading " + path.string());
  const std::string message = errorMessage(load);
  expectContains(message, path.string());
  expectContains(message, hint);
}

class IdxReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    scratch_ =
        fs::temp_directory_path() / ("imerge_idx_" + std::to_string(getpid()) + "_" + info->name());
    fs::create_directories(scratch_);
  }
  void TearDown() override { fs::remove_all(scratch_); }

  fs::path scratch_;
};

TEST_F(IdxReaderTest, ReadsPlainFixture) {
  expectTinyImages(readIdxImages(kFixtures / "tiny-images-idx3-ubyte"));
  expectTinyLabels(readIdxLabels(kFixtures / "tiny-labels-idx1-ubyte"));
}

TEST_F(IdxReaderTest, ReadsGzipFixture) {
  expectTinyImages(readIdxImages(kFixtures / "tiny-images-idx3-ubyte.gz"));
  expectTinyLabels(readIdxLabels(kFixtures / "tiny-labels-idx1-ubyte.gz"));
}

TEST_F(IdxReaderTest, LoadsSplitFromGzipOrPlainFiles) {
  IdxDataset dataset = loadIdxDataset(kFixtures.string(), "tiny");
  expectTinyImages(dataset.images);
  expectTinyLabels(dataset.labels);

  // Without the .gz files the plain ones are used.
  fs::copy_file(kFixtures / "tiny-images-idx3-ubyte", scratch_ / "tiny-images-idx3-ubyte");
  fs::copy_file(kFixtures / "tiny-labels-idx1-ubyte", scratch_ / "tiny-labels-idx1-ubyte");
  dataset = loadIdxDataset(scratch_.string(), "tiny");
  expectTinyImages(dataset.images);
  expectTinyLabels(dataset.labels);
}

TEST_F(IdxReaderTest, PrefersGzipFileWhenBothExist) {
  // Different counts in the plain and gzip files show which one was read.
  fs::copy_file(kFixtures / "tiny-images-idx3-ubyte.gz", scratch_ / "s-images-idx3-ubyte.gz");
  fs::copy_file(kFixtures / "tiny-labels-idx1-ubyte.gz", scratch_ / "s-labels-idx1-ubyte.gz");
  writeBytes(scratch_ / "s-images-idx3-ubyte", idxBytes(0x08, {1, 1, 1}, {9}));
  writeBytes(scratch_ / "s-labels-idx1-ubyte", idxBytes(0x08, {1}, {9}));
  const IdxDataset dataset = loadIdxDataset(scratch_.string(), "s");
  expectTinyImages(dataset.images);
  expectTinyLabels(dataset.labels);
}

TEST_F(IdxReaderTest, MissingFileNamesPathAndPackage) {
  const fs::path missing = scratch_ / "no-such-images-idx3-ubyte";
  expectErrorNaming([&] { readIdxImages(missing.string()); }, missing, "No such file or directory");
  expectErrorNaming([&] { readIdxImages(missing.string()); }, missing,
                    "apt-get install dataset-fashion-mnist");

  const fs::path missingGz = scratch_ / "train-images-idx3-ubyte.gz";
  expectErrorNaming([&] { loadIdxDataset(scratch_.string(), "train"); }, missingGz,
                    "No such file or directory");
  expectErrorNaming([&] { loadIdxDataset(scratch_.string(), "train"); }, missingGz,
                    "apt-get install dataset-fashion-mnist");
}

TEST_F(IdxReaderTest, BadMagicNamesFile) {
  const fs::path path = scratch_ / "bad-magic";
  std::vector<char> bytes = readBytes(kFixtures / "tiny-images-idx3-ubyte");
  bytes[0] = 0x12;
  writeBytes(path, bytes);
  expectErrorNaming([&] { readIdxImages(path.string()); }, path, "not an IDX file");

  // A text file is not an IDX file either, whatever its name says.
  const fs::path text = scratch_ / "text-images-idx3-ubyte";
  writeBytes(text, {'<', 'h', 't', 'm', 'l', '>', '\n'});
  expectErrorNaming([&] { readIdxImages(text.string()); }, text, "not an IDX file");
}

TEST_F(IdxReaderTest, NonByteElementTypeNamesFile) {
  const fs::path path = scratch_ / "float-images";
  writeBytes(path, idxBytes(0x0D, {1, 1, 1}, {0, 0, 0, 0}));
  expectErrorNaming([&] { readIdxImages(path.string()); }, path, "float32");
}

TEST_F(IdxReaderTest, RankMismatchNamesFile) {
  const fs::path labelsFile = kFixtures / "tiny-labels-idx1-ubyte";
  const fs::path imagesFile = kFixtures / "tiny-images-idx3-ubyte.gz";
  expectErrorNaming([&] { readIdxImages(labelsFile.string()); }, labelsFile, "rank 1");
  expectErrorNaming([&] { readIdxLabels(imagesFile.string()); }, imagesFile, "rank 3");
}

TEST_F(IdxReaderTest, TruncatedDataNamesFileAndByteCounts) {
  const fs::path path = scratch_ / "short-images";
  std::vector<char> bytes = readBytes(kFixtures / "tiny-images-idx3-ubyte");
  bytes.resize(bytes.size() - 2);
  writeBytes(path, bytes);
  expectErrorNaming([&] { readIdxImages(path.string()); }, path,
                    "needs 18 data bytes, but the file has 16 after the header");

  const fs::path headerOnly = scratch_ / "header-only";
  bytes.resize(6);
  writeBytes(headerOnly, bytes);
  expectErrorNaming([&] { readIdxImages(headerOnly.string()); }, headerOnly, "truncated");

  const fs::path empty = scratch_ / "empty";
  writeBytes(empty, {});
  expectErrorNaming([&] { readIdxLabels(empty.string()); }, empty, "truncated");
}

TEST_F(IdxReaderTest, OverstatedSizesFailWithoutHugeAllocation) {
  // 4e9^3 bytes overflows 64 bits; 2^32 - 1 images of 28 x 28 is about 3 TB, far more than
  // the file holds, and must fail as truncated rather than by allocating it.
  const fs::path impossible = scratch_ / "impossible";
  writeBytes(impossible, idxBytes(0x08, {4000000000u, 4000000000u, 4000000000u}, {1, 2}));
  expectErrorNaming([&] { readIdxImages(impossible.string()); }, impossible, "impossible size");

  // About 3 TB declared: over the reader's limit, refused from the header alone.
  const fs::path huge = scratch_ / "huge";
  writeBytes(huge, idxBytes(0x08, {0xffffffffu, 28, 28}, {1, 2, 3}));
  expectErrorNaming([&] { readIdxImages(huge.string()); }, huge,
                    "3367254359280 data bytes, more than the 17179869184 this reader accepts");
  // 78 MB declared, within the limit, by a file of 19 bytes: refused before reading the data.
  const fs::path overstated = scratch_ / "overstated";
  writeBytes(overstated, idxBytes(0x08, {100000, 28, 28}, {1, 2, 3}));
  expectErrorNaming([&] { readIdxImages(overstated.string()); }, overstated,
                    "needs 78400000 data bytes, but the file has 3 after the header");
}

TEST_F(IdxReaderTest, ADeviceIsNotAnIdxFile) {
  expectErrorNaming([] { readIdxImages("/dev/zero"); }, "/dev/zero",
                    "is not a regular file (a character device)");
}

TEST_F(IdxReaderTest, TruncatedGzipNamesFile) {
  const std::vector<char> whole = readBytes(kFixtures / "tiny-images-idx3-ubyte.gz");
  // Cut inside the deflate data, and cut only the 8-byte trailer (all pixels still arrive).
  for (size_t keep : {whole.size() / 2, whole.size() - 4}) {
    const fs::path path = scratch_ / ("cut-" + std::to_string(keep) + ".gz");
    writeBytes(path, std::vector<char>(whole.begin(), whole.begin() + keep));
    expectErrorNaming([&] { readIdxImages(path.string()); }, path, "truncated");
  }
}

TEST_F(IdxReaderTest, CorruptGzipNamesFile) {
  std::vector<char> bytes = readBytes(kFixtures / "tiny-images-idx3-ubyte.gz");
  bytes[bytes.size() - 6] ^= 0x5a;  // inside the CRC-32 of the trailer
  const fs::path path = scratch_ / "bad-crc.gz";
  writeBytes(path, bytes);
  expectErrorNaming([&] { readIdxImages(path.string()); }, path, "cannot read");
}

TEST_F(IdxReaderTest, TrailingBytesNameFile) {
  std::vector<char> bytes = readBytes(kFixtures / "tiny-labels-idx1-ubyte");
  bytes.push_back(1);
  const fs::path path = scratch_ / "long-labels";
  writeBytes(path, bytes);
  expectErrorNaming([&] { readIdxLabels(path.string()); }, path, "data after the 3 bytes");
}

TEST_F(IdxReaderTest, CountMismatchNamesBothFiles) {
  fs::copy_file(kFixtures / "tiny-images-idx3-ubyte.gz", scratch_ / "x-images-idx3-ubyte.gz");
  writeBytes(scratch_ / "x-labels-idx1-ubyte", idxBytes(0x08, {2}, {1, 2}));
  const auto load = [&] { loadIdxDataset(scratch_.string(), "x"); };
  expectErrorNaming(load, scratch_ / "x-images-idx3-ubyte.gz", "3 images");
  expectErrorNaming(load, scratch_ / "x-labels-idx1-ubyte", "2 labels");
}

TEST_F(IdxReaderTest, LabelsAboveNineAreKept) {
  const fs::path path = scratch_ / "wide-labels";
  writeBytes(path, idxBytes(0x08, {4}, {0, 9, 10, 255}));
  const Tensor labels = readIdxLabels(path.string());
  const int64_t* values = labels.data<int64_t>();
  EXPECT_EQ(std::vector<int64_t>(values, values + 4), (std::vector<int64_t>{0, 9, 10, 255}));
}

TEST_F(IdxReaderTest, EmptySplitIsAllowed) {
  const fs::path path = scratch_ / "no-images";
  writeBytes(path, idxBytes(0x08, {0, 28, 28}, {}));
  EXPECT_EQ(readIdxImages(path.string()).shape(), (Shape{0, 1, 28, 28}));
}

TEST(FashionMnistTest, LoadsBothSplits) {
  if (!fs::exists(kFashionMnist)) {
    GTEST_SKIP() << kFashionMnist << " is absent: apt-get install dataset-fashion-mnist";
  }
  const auto start = std::chrono::steady_clock::now();
  const IdxDataset train = loadIdxDataset(kFashionMnist.string(), "train");
  const double trainSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "Fashion-MNIST train loaded in " << trainSeconds << " s\n";
  // Loose enough for a loaded machine or a sanitizer build; a byte-at-a-time reader takes far
  // longer.
  EXPECT_LT(trainSeconds, 5.0);

  const IdxDataset test = loadIdxDataset(kFashionMnist.string(), "t10k");
  EXPECT_EQ(train.images.shape(), (Shape{60000, 1, 28, 28}));
  EXPECT_EQ(train.labels.shape(), (Shape{60000}));
  EXPECT_EQ(test.images.shape(), (Shape{10000, 1, 28, 28}));
  EXPECT_EQ(test.labels.shape(), (Shape{10000}));

  std::array<int64_t, 10> trainCounts{};
  const int64_t* trainLabels = train.labels.data<int64_t>();
  for (int64_t i = 0; i < train.labels.numel(); ++i) {
    ASSERT_TRUE(trainLabels[i] >= 0 && trainLabels[i] <= 9) << "label " << trainLabels[i];
    ++trainCounts[static_cast<size_t>(trainLabels[i])];
  }
  for (size_t label = 0; label < trainCounts.size(); ++label) {
    EXPECT_EQ(trainCounts[label], 6000) << "class " << label;
  }
  std::array<int64_t, 10> testCounts{};
  const int64_t* testLabels = test.labels.data<int64_t>();
  for (int64_t i = 0; i < test.labels.numel(); ++i) {
    ASSERT_TRUE(testLabels[i] >= 0 && testLabels[i] <= 9) << "label " << testLabels[i];
    ++testCounts[static_cast<size_t>(testLabels[i])];
  }
  for (size_t label = 0; label < testCounts.size(); ++label) {
    EXPECT_EQ(testCounts[label], 1000) << "class " << label;
  }

  float low = 1.0f, high = 0.0f;
  const float* pixels = train.images.data<float>();
  for (int64_t i = 0; i < train.images.numel(); ++i) {
    low = std::min(low, pixels[i]);
    high = std::max(high, pixels[i]);
  }
  EXPECT_EQ(low, 0.0f);
  EXPECT_EQ(high, 1.0f);
}

}  // namespace
}  // namespace imerge::data
