// Differentiable 2-D convolution (oneDNN underneath).
#pragma once

#include <array>
#include <optional>

#include "autograd/variable.h"

namespace imerge::autograd {

struct Conv2dOptions {
  std::array<int64_t, 2> stride{1, 1};
  std::array<int64_t, 2> padding{0, 0};  // before the input {top, left}; and after, if no end
  std::array<int64_t, 2> dilation{1, 1};
  int64_t groups = 1;
  // After the input {bottom, right}, when it differs from `padding` (ONNX's pads end values,
  // oneDNN's padding_r): .paddingEnd = {{1, 0}}. CPU only; CUDA refuses it (cuDNN pads
  // symmetrically).
  std::optional<std::array<int64_t, 2>> paddingEnd{};
};

// input [N, C_in, H, W], weight [C_out, C_in / groups, kH, kW], bias [C_out] or undefined
// -> [N, C_out, H_out, W_out]; PyTorch's nn.functional.conv2d.
Variable conv2d(const Variable& input, const Variable& weight, const Variable& bias,
                const Conv2dOptions& options);

}  // namespace imerge::autograd
