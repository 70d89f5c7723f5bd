// Differentiable 2-D convolution (oneDNN underneath).
#pragma once

#include <array>

#include "autograd/variable.h"

namespace imerge::autograd {

struct Conv2dOptions {
  std::array<int64_t, 2> stride{1, 1};
  std::array<int64_t, 2> padding{0, 0};
  std::array<int64_t, 2> dilation{1, 1};
  int64_t groups = 1;
};

// input [N, C_in, H, W], weight [C_out, C_in / groups, kH, kW], bias [C_out] or undefined
// -> [N, C_out, H_out, W_out]; PyTorch's nn.functional.conv2d.
Variable conv2d(const Variable& input, const Variable& weight, const Variable& bias,
                const Conv2dOptions& options);

}  // namespace imerge::autograd
