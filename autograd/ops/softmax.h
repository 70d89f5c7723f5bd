// Differentiable log-softmax.
#pragma once

#include <cstdint>

#include "autograd/variable.h"

namespace imerge::autograd {

// input float32 of any shape -> input - logsumexp(input, dim), of the same shape; PyTorch's
// nn.functional.log_softmax. `dim` counts from the end when negative (-1: the last dimension).
// Numerically stable (the maximum along `dim` is subtracted first). CPU only for now.
Variable logSoftmax(const Variable& input, int64_t dim);

}  // namespace imerge::autograd
