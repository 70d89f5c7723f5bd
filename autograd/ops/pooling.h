// Differentiable 2-D pooling (oneDNN underneath).
#pragma once

#include <array>
#include <optional>

#include "autograd/variable.h"

namespace imerge::autograd {

struct Pool2dOptions {
  std::array<int64_t, 2> kernel{2, 2};
  std::array<int64_t, 2> stride{2, 2};
  std::array<int64_t, 2> padding{0, 0};  // before the input {top, left}; and after, if no end
  bool ceilMode = false;
  bool countIncludePad = true;  // average pooling only; PyTorch's default
  // After the input {bottom, right}, when it differs from `padding` (ONNX's pads end values):
  // .paddingEnd = {{1, 0}}. Each side at most half the kernel. With countIncludePad, an
  // average's divisor counts the padding on both sides, as ONNX's count_include_pad, but not the
  // extra end that ceil mode adds.
  std::optional<std::array<int64_t, 2>> paddingEnd{};
};

// input [N, C, H, W] -> [N, C, H_out, W_out]
Variable maxPool2d(const Variable& input, const Pool2dOptions& options);
Variable avgPool2d(const Variable& input, const Pool2dOptions& options);
// Averages over PyTorch's adaptive windows: start = floor(i * H / H_out),
// end = ceil((i + 1) * H / H_out).
Variable adaptiveAvgPool2d(const Variable& input, std::array<int64_t, 2> outputSize);

}  // namespace imerge::autograd
