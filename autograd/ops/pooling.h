// Differentiable 2-D pooling (oneDNN underneath).
#pragma once

#include <array>

#include "autograd/variable.h"

namespace imerge::autograd {

struct Pool2dOptions {
  std::array<int64_t, 2> kernel{2, 2};
  std::array<int64_t, 2> stride{2, 2};
  std::array<int64_t, 2> padding{0, 0};
  bool ceilMode = false;
  bool countIncludePad = true;  // average pooling only; PyTorch's default
};

// input [N, C, H, W] -> [N, C, H_out, W_out]
Variable maxPool2d(const Variable& input, const Pool2dOptions& options);
Variable avgPool2d(const Variable& input, const Pool2dOptions& options);
// Averages over PyTorch's adaptive windows: start = floor(i * H / H_out),
// end = ceil((i + 1) * H / H_out).
Variable adaptiveAvgPool2d(const Variable& input, std::array<int64_t, 2> outputSize);

}  // namespace imerge::autograd
