// The SGD update of optim/sgd.h on a CUDA device: one kernel per parameter, the same
// arithmetic as the CPU loop (PyTorch's torch.optim.SGD):
//   d = grad + weightDecay * p
//   buf = firstStep ? d : momentum * buf + keep * d          (keep = 1 - dampening)
//   p -= lr * (nesterov ? d + momentum * buf : buf)           (momentum > 0)
//   p -= lr * d                                               (momentum == 0; buf unused)
#pragma once

#include "core/kernel_params.h"
#include "core/tensor.h"

namespace imerge::cuda {

using imerge::SgdStep;  // core/kernel_params.h

// parameter, gradient, momentumBuffer: same shape, float32, one CUDA device; momentumBuffer is
// ignored (and may be undefined) when momentum == 0.
void sgdUpdate(Tensor& parameter, const Tensor& gradient, Tensor& momentumBuffer,
               const SgdStep& step);

}  // namespace imerge::cuda
