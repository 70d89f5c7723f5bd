// Reader for the IDX files of MNIST and Fashion-MNIST (gzip-compressed or plain).
//
// Format: big-endian magic (0x00 0x00 type rank), rank big-endian uint32 sizes, then the data.
// Images are type 0x08 (unsigned byte), rank 3 [count, rows, cols]; labels rank 1 [count].
#pragma once

#include <cstdint>
#include <string>

#include "core/tensor.h"

namespace imerge::data {

// The most data bytes an IDX header may declare (the largest real file, MNIST-scale training
// images, has 47 MB). A plain file's header must also account for exactly the file's size; a
// gzip file is inflated into memory only as far as real bytes arrive.
inline constexpr uint64_t kMaxIdxDataBytes = uint64_t{16} << 30;

// Images as float32 [count, 1, rows, cols] scaled to [0, 1].
Tensor readIdxImages(const std::string& path);
// Labels as int64 [count].
Tensor readIdxLabels(const std::string& path);

// A labelled split of an IDX dataset, e.g. Fashion-MNIST's "train" or "t10k".
struct IdxDataset {
  Tensor images;           // float32 [count, 1, 28, 28]
  Tensor labels;           // int64 [count]
  std::string labelsPath;  // the file the labels came from, for messages about them
};
// Reads "<directory>/<split>-images-idx3-ubyte[.gz]" and the matching labels, and checks that
// their counts agree.
IdxDataset loadIdxDataset(const std::string& directory, const std::string& split);

}  // namespace imerge::data
