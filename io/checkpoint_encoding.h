// The checkpoint file's constants and the encodings the writer and the reader share
// (docs/checkpoint_format.md). Internal to io/.
#pragma once

#include <zlib.h>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "core/dtype.h"
#include "core/error.h"
#include "core/shape.h"

namespace imerge::io::detail {

// Tensors are written as their in-memory bytes, which is the documented little-endian layout
// only on a little-endian host. Every machine imerge targets is one.
static_assert(std::endian::native == std::endian::little,
              "checkpoint I/O assumes a little-endian host (see docs/checkpoint_format.md)");

constexpr char kMagic[8] = {'I', 'M', 'E', 'R', 'G', 'E', 'C', 'K'};
// magic (8) + version (4) + CRC-32 (4) + file length (8)
constexpr size_t kHeaderBytes = 24;
constexpr uint32_t kMaxDims = 16;
constexpr uint8_t kNoOptimizer = 0;
constexpr uint8_t kSgdOptimizer = 1;
// Above this, buffered bytes go to the file; large tensors bypass the buffer entirely.
constexpr size_t kWriteBufferBytes = size_t{1} << 20;

inline std::string errnoText(int error) {
  return std::strerror(error);
}

inline uint8_t dtypeCode(DType dtype) {
  switch (dtype) {
    case DType::Float32:
      return 0;
    case DType::Int32:
      return 1;
    case DType::Int64:
      return 2;
  }
  IMERGE_FAIL("checkpoint: unknown dtype");
}

inline std::string describeTensor(DType dtype, const Shape& shape) {
  return std::string(dtypeName(dtype)) + shapeToString(shape);
}

// crc32() takes a uInt length; feed it in pieces that fit.
inline uint32_t crc32Update(uint32_t crc, const uint8_t* data, size_t size) {
  uLong value = crc;
  while (size > 0) {
    const auto piece = static_cast<uInt>(std::min<size_t>(size, 1u << 30));
    value = ::crc32(value, data, piece);
    data += piece;
    size -= piece;
  }
  return static_cast<uint32_t>(value);
}

}  // namespace imerge::io::detail
