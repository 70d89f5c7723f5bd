// Small float32 tensors spelled out in a test.
#pragma once

#include <cstdint>
#include <vector>

#include "core/tensor.h"

namespace imerge::testing {

// A float32 tensor of `shape` holding `values` in row-major order.
inline Tensor floats(const std::vector<float>& values, const Shape& shape) {
  return Tensor::fromVector(values, shape);
}

// A 1-D float32 tensor holding `values`.
inline Tensor floats(const std::vector<float>& values) {
  return Tensor::fromVector(values, {static_cast<int64_t>(values.size())});
}

}  // namespace imerge::testing
