#include "data/cifar10.h"

#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "core/input_file.h"

namespace imerge::data {
namespace {

namespace fs = std::filesystem;

constexpr const char* kWhereToGetData =
    "; CIFAR-10's binary version (https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz) "
    "unpacks into cifar-10-batches-bin/ with data_batch_1.bin .. data_batch_5.bin and "
    "test_batch.bin";

}  // namespace

std::vector<std::string> Cifar10Dataset::splitFiles(const std::string& split) {
  if (split == "train") {
    return {"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin", "data_batch_4.bin",
            "data_batch_5.bin"};
  }
  if (split == "test") return {"test_batch.bin"};
  IMERGE_FAIL("cifar10: unknown split \"", split, "\"; use \"train\" or \"test\"");
}

Cifar10Dataset::Cifar10Dataset(const std::string& directory, const std::string& split,
                               TransformPtr transform)
    : transform_(std::move(transform)) {
  const std::vector<std::string> names = splitFiles(split);
  std::error_code ignored;
  IMERGE_CHECK(fs::is_directory(directory, ignored), "cifar10: data directory ", directory,
               " does not exist or is not a directory", kWhereToGetData);
  fs::path folder = directory;
  if (!fs::exists(folder / names[0], ignored) &&
      fs::is_directory(folder / "cifar-10-batches-bin", ignored)) {
    folder /= "cifar-10-batches-bin";
  }
  std::vector<std::string> files;
  for (const std::string& name : names) files.push_back((folder / name).string());
  source_ = "cifar10 " + split + " from " + folder.string();
  load(files);
}

Cifar10Dataset::Cifar10Dataset(const std::vector<std::string>& files, TransformPtr transform)
    : transform_(std::move(transform)) {
  IMERGE_CHECK(!files.empty(), "cifar10: no files given");
  source_ = "cifar10 from " + files.front() + (files.size() > 1 ? " and others" : "");
  load(files);
}

void Cifar10Dataset::load(const std::vector<std::string>& files) {
  for (const std::string& path : files) {
    std::ifstream in(path, std::ios::binary);
    IMERGE_CHECK(in.is_open(), "cannot open ", path, ": ", std::strerror(errno), kWhereToGetData);
    // Its size decides the records, and the memory: a regular file of kMaxRecordsPerFile at most.
    const auto bytes = static_cast<int64_t>(
        checkedInputFileSize(path, kMaxRecordsPerFile * kRecordBytes, "CIFAR-10 batch"));
    const int64_t records = bytes / kRecordBytes;
    IMERGE_CHECK(bytes > 0 && bytes % kRecordBytes == 0, path, " is ",
                 bytes == 0 ? "empty" : "truncated or not a CIFAR-10 binary batch", ": ", bytes,
                 " bytes is not a whole number of ", kRecordBytes,
                 "-byte records (1 label byte + 3072 pixel bytes); ", records,
                 " complete records and ", bytes % kRecordBytes, " bytes left over");
    std::vector<uint8_t> contents(static_cast<size_t>(bytes));
    in.read(reinterpret_cast<char*>(contents.data()), bytes);
    IMERGE_CHECK(in.gcount() == bytes, "cannot read ", path, ": got ", in.gcount(), " of ", bytes,
                 " bytes");
    pixels_.reserve(pixels_.size() + static_cast<size_t>(records * kPixelBytes));
    for (int64_t record = 0; record < records; ++record) {
      const uint8_t* start = contents.data() + record * kRecordBytes;
      // A label outside 0..9 means the file is something else (CIFAR-100 has 2 label bytes).
      IMERGE_CHECK(start[0] < kClasses, path, ": record ", record, " has label ", int{start[0]},
                   " but CIFAR-10 labels are 0..9; is it a CIFAR-10 binary batch?");
      labels_.push_back(start[0]);
      pixels_.insert(pixels_.end(), start + 1, start + kRecordBytes);
    }
  }
  transformedShape(transform_, {kChannels, kSide, kSide});  // validates the transform
}

Example Cifar10Dataset::get(int64_t index, Generator& generator) const {
  IMERGE_CHECK(index >= 0 && index < size(), describe(), ": index ", index, " out of range [0, ",
               size(), ")");
  // byte / 255.0f, as torchvision's ToTensor.
  static const std::array<float, 256> kScaled = [] {
    std::array<float, 256> table{};
    for (int value = 0; value < 256; ++value) table[value] = static_cast<float>(value) / 255.0f;
    return table;
  }();
  Tensor image = Tensor::empty({kChannels, kSide, kSide});  // [3, 32, 32]
  float* out = image.data<float>();
  const uint8_t* in = pixels_.data() + index * kPixelBytes;
  for (int64_t i = 0; i < kPixelBytes; ++i) out[i] = kScaled[in[i]];
  return {applyTransform(transform_, image, generator), labels_[static_cast<size_t>(index)]};
}

Shape Cifar10Dataset::imageShape() const {
  return transformedShape(transform_, {kChannels, kSide, kSide});
}

std::string Cifar10Dataset::describe() const {
  return source_ + " (" + std::to_string(size()) + " images" +
         (transform_ ? ", " + transform_->describe() : std::string()) + ")";
}

}  // namespace imerge::data
