// Where element i of a contiguous [outer, rows, columns] block of memory sits. The own kernels'
// grid-stride loops visit flat indices and turn each into a position here (pooling: [planes,
// H, W]; LRN: [images, C, H * W]), and the CPU tests that replay those loops
// (tests/core/cuda_kernel_math_test.cpp) call the same function, so they check the kernels'
// indexing as well as their arithmetic. Plain C++17; no CUDA headers needed.
#pragma once

#include <cstdint>

#include "core/cuda/host_device.h"

namespace imerge::cuda {

struct FlatPosition {
  int64_t outer;   // which [rows, columns] block
  int64_t row;     // 0 <= row < rows
  int64_t column;  // 0 <= column < columns
};

// i >= 0, rows > 0, columns > 0.
IMERGE_HOST_DEVICE inline FlatPosition positionOf(int64_t i, int64_t rows, int64_t columns) {
  const int64_t block = rows * columns;
  const int64_t outer = i / block;
  const int64_t within = i - outer * block;
  const int64_t row = within / columns;
  return {outer, row, within - row * columns};
}

}  // namespace imerge::cuda
