// CIFAR-10 in its binary version (cifar-10-binary.tar.gz) as a Dataset.
//
// Format: each file is a sequence of 3073-byte records, 1 label byte (0..9) then 3072 pixel
// bytes: the 1024 red values of the 32x32 image row-major, then green, then blue, which is
// already [C, H, W]. The training split is data_batch_1.bin .. data_batch_5.bin (10000 records
// each), the test split test_batch.bin. Pixels are kept as bytes (150 MB for the training set,
// not 600 MB of floats) and scaled to [0, 1] per example.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "data/transforms.h"

namespace imerge::data {

class Cifar10Dataset final : public Dataset {
 public:
  static constexpr int64_t kChannels = 3;
  static constexpr int64_t kSide = 32;
  static constexpr int64_t kPixelBytes = kChannels * kSide * kSide;  // 3072
  static constexpr int64_t kRecordBytes = 1 + kPixelBytes;           // 3073
  // A batch file holds 10000 records (30730000 bytes); one of more than ten times that is not
  // a CIFAR-10 batch, and is refused before it is read.
  static constexpr int64_t kMaxRecordsPerFile = 100000;
  static constexpr int64_t kClasses = 10;

  // split: "train" or "test". `directory` holds the .bin files, or is the folder the archive
  // unpacks into (its cifar-10-batches-bin sub-folder is used when present).
  Cifar10Dataset(const std::string& directory, const std::string& split,
                 TransformPtr transform = nullptr);
  // The records of `files`, in order; for subsets and tests.
  explicit Cifar10Dataset(const std::vector<std::string>& files, TransformPtr transform = nullptr);

  int64_t size() const override { return static_cast<int64_t>(labels_.size()); }
  Example get(int64_t index, Generator& generator) const override;
  Shape imageShape() const override;  // [3, 32, 32] before transforms
  int64_t classes() const override { return kClasses; }
  std::string describe() const override;

  // The file names of a split, in record order.
  static std::vector<std::string> splitFiles(const std::string& split);

 private:
  void load(const std::vector<std::string>& files);

  std::string source_;
  TransformPtr transform_;
  std::vector<uint8_t> pixels_;  // [N, 3, 32, 32] bytes
  std::vector<uint8_t> labels_;  // [N]
};

}  // namespace imerge::data
