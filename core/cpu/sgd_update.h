// The SGD update of optim/sgd.h on the CPU: one pass over a parameter, with the arithmetic of
// core/kernel_params.h's SgdStep (PyTorch's torch.optim.SGD), the same as the CUDA kernel's.
// OpenMP across elements for large parameters only: most tensors are small (biases, BN).
#pragma once

#include "core/kernel_params.h"
#include "core/tensor.h"

namespace imerge::cpu {

// parameter, gradient, momentumBuffer: same shape, float32, on the CPU; momentumBuffer is
// ignored (and may be undefined) when step.momentum == 0.
void sgdUpdate(Tensor& parameter, const Tensor& gradient, Tensor& momentumBuffer,
               const SgdStep& step);

}  // namespace imerge::cpu
