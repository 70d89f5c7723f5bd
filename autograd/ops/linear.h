// Differentiable matrix products (OpenBLAS sgemm underneath).
#pragma once

#include "autograd/variable.h"

namespace imerge::autograd {

// a [M, K] x b [K, N] -> [M, N]
Variable matmul(const Variable& a, const Variable& b);

// input [N, in_features], weight [out_features, in_features], bias [out_features] or
// undefined -> [N, out_features]; PyTorch's nn.functional.linear.
Variable linear(const Variable& input, const Variable& weight, const Variable& bias);

}  // namespace imerge::autograd
