// Batch normalisation over NCHW float32 tensors on a CUDA device through cuDNN (spatial mode:
// statistics per channel over N, H and W), with the conventions of core/cpu/batch_norm.h: an
// undefined weight means gamma = 1, an undefined bias beta = 0, and the running statistics are
// updated as PyTorch does (running = (1 - momentum) * running + momentum * batch, the variance
// made unbiased first; a [C]-element kernel of ours does that, from savedMean and savedInvStd,
// because cuDNN does not document which variance its own update tracks). eps must be at least
// cuDNN's CUDNN_BN_MIN_EPSILON, which is 0 in the cuDNN 9.19 built against (cuDNN 7 had 1e-5;
// PyTorch's default eps is 1e-5): a smaller one, or NaN, is refused naming eps and the minimum.
//
// Every call is queued on the tensors' device stream and returns without waiting.
#pragma once

#include <cstdint>

#include "core/cpu/batch_norm.h"
#include "core/tensor.h"

namespace imerge::cuda {

using cpu::BatchNormGradients;

struct BatchNormTrainingResult {
  Tensor output;       // [N, C, H, W]
  Tensor savedMean;    // [C] the batch mean
  Tensor savedInvStd;  // [C] 1 / sqrt(batch variance + eps), the variance biased (over N*H*W)
};

// Normalises with the batch's own statistics. When runningMean and runningVar are defined
// ([C] each, on the same device; both or neither) they are updated in place with `momentum`.
BatchNormTrainingResult batchNormTrainingForward(const Tensor& input, const Tensor& weight,
                                                 const Tensor& bias, Tensor& runningMean,
                                                 Tensor& runningVar, float momentum, float eps);

// Normalises with given statistics (the running ones, in evaluation).
Tensor batchNormInferenceForward(const Tensor& input, const Tensor& weight, const Tensor& bias,
                                 const Tensor& mean, const Tensor& variance, float eps);

// Backward of batchNormTrainingForward: the gradient flows through the batch statistics.
BatchNormGradients batchNormTrainingBackward(const Tensor& gradOutput, const Tensor& input,
                                             const Tensor& weight, const Tensor& savedMean,
                                             const Tensor& savedInvStd, float eps);

// Backward of batchNormInferenceForward: mean and variance were constants, so the input's
// gradient is gradOutput * gamma / sqrt(variance + eps) per channel. An own kernel (cuDNN has
// none for this case), one block per channel with a fixed reduction order: deterministic.
BatchNormGradients batchNormInferenceBackward(const Tensor& gradOutput, const Tensor& input,
                                              const Tensor& weight, const Tensor& mean,
                                              const Tensor& variance, float eps);

}  // namespace imerge::cuda
