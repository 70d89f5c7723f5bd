// Differentiable batch normalisation and local response normalisation (oneDNN underneath).
#pragma once

#include "autograd/variable.h"

namespace imerge::autograd {

struct BatchNormOptions {
  bool training = true;
  float momentum = 0.1f;  // running = (1 - momentum) * running + momentum * batch statistic
  float eps = 1e-5f;
};

// input [N, C, H, W]; weight and bias [C] (either may be undefined: gamma 1, beta 0);
// runningMean and runningVar [C], updated in place in training (the variance with Bessel's
// correction, as PyTorch does) and used for normalisation in evaluation.
Variable batchNorm2d(const Variable& input, const Variable& weight, const Variable& bias,
                     Tensor& runningMean, Tensor& runningVar, const BatchNormOptions& options);

// relu(batchNorm2d(...)) as one op: in training the backend's fused kernels (on the CPU one
// pass over the activation fewer in forward and in backward, and no intermediate tensor), in
// evaluation the two ops in turn. Results and gradients equal those of the two ops.
Variable batchNormRelu2d(const Variable& input, const Variable& weight, const Variable& bias,
                         Tensor& runningMean, Tensor& runningVar, const BatchNormOptions& options);

// Across channels: out = x / (k + alpha / size * sum over the window of x^2)^beta, with the
// window of PyTorch's nn.LocalResponseNorm (size/2 channels before, (size-1)/2 after).
Variable localResponseNorm(const Variable& input, int64_t size, float alpha, float beta, float k);

}  // namespace imerge::autograd
