// The per-element arithmetic and indexing of batch_norm.cu's own kernels, as inline functions
// that compile for the device under nvcc and for the host under g++: the kernels call them, and
// tests/core/batch_norm_math_test.cpp runs the same functions on the CPU against
// core/cpu/batch_norm (which checks the indexing and formulas without a GPU).
//
// Layout: NCHW, so channel c of image n is the contiguous run [(n * C + c) * plane, + plane),
// plane = H * W; a channel's count = N * plane elements are numbered j = n * plane + i.
#pragma once

#include <math.h>  // sqrtf in the global namespace, for host and device alike

#include <cstdint>

#include "core/cuda/host_device.h"

namespace imerge::cuda::batch_norm_math {

// Where element j (0 <= j < N * plane) of channel c lies in the NCHW tensor.
IMERGE_HOST_DEVICE inline int64_t channelElement(int64_t j, int64_t c, int64_t channels,
                                                 int64_t plane) {
  const int64_t n = j / plane;
  const int64_t i = j - n * plane;
  return (n * channels + c) * plane + i;
}

// 1 / sqrt(variance + eps), in float as the CPU kernels compute it.
IMERGE_HOST_DEVICE inline float inverseStd(float variance, float eps) {
  return 1.0f / sqrtf(variance + eps);
}

// The biased batch variance back from cuDNN's saved 1 / sqrt(variance + eps). In double: the
// subtraction of eps cancels digits when the variance is far below eps; the result is clamped
// at zero, where rounding could leave a tiny negative value.
IMERGE_HOST_DEVICE inline float varianceFromInverseStd(float invStd, float eps) {
  const double inv = invStd;
  const double variance = 1.0 / (inv * inv) - static_cast<double>(eps);
  return variance > 0.0 ? static_cast<float>(variance) : 0.0f;
}

// n / (n - 1), which makes a biased variance over n elements unbiased; 1 for n <= 1, where
// PyTorch would divide by zero (the CPU kernel's choice, kept here).
IMERGE_HOST_DEVICE inline float besselFactor(int64_t count) {
  return count > 1 ? static_cast<float>(count) / static_cast<float>(count - 1) : 1.0f;
}

// PyTorch's running-statistics rule for channel c: running = (1 - momentum) * running +
// momentum * batch, the batch variance made unbiased first. savedMean and savedInvStd are
// cuDNN's per-channel results of the training forward.
IMERGE_HOST_DEVICE inline void updateRunningStatisticsAt(int64_t c, float* runningMean,
                                                         float* runningVar, const float* savedMean,
                                                         const float* savedInvStd, float eps,
                                                         float momentum, int64_t count) {
  const float batchVariance = varianceFromInverseStd(savedInvStd[c], eps);
  runningMean[c] = (1.0f - momentum) * runningMean[c] + momentum * savedMean[c];
  runningVar[c] =
      (1.0f - momentum) * runningVar[c] + momentum * batchVariance * besselFactor(count);
}

// One thread's share of channel c in the backward with constant statistics (inference): the
// elements j = first, first + stride, ... < count. It writes gradInput = gradScale * gradOutput
// (gradScale = gamma / sqrt(variance + eps)) and accumulates sum(gradOutput) and
// sum(gradOutput * (x - mean)), the sums behind the bias and weight gradients.
struct ChannelSums {
  double gradOutput = 0.0;
  double gradOutputCentred = 0.0;
};

IMERGE_HOST_DEVICE inline ChannelSums inferenceBackwardShare(
    const float* gradOutput, const float* input, float* gradInput, int64_t c, int64_t channels,
    int64_t plane, int64_t count, int64_t first, int64_t stride, float mean, float gradScale) {
  ChannelSums sums;
  for (int64_t j = first; j < count; j += stride) {
    const int64_t index = channelElement(j, c, channels, plane);
    const float dy = gradOutput[index];
    gradInput[index] = gradScale * dy;
    sums.gradOutput += dy;
    sums.gradOutputCentred += static_cast<double>(dy) * static_cast<double>(input[index] - mean);
  }
  return sums;
}

// The parameter gradients of channel c from its completed sums: dBeta = sum(dy),
// dGamma = sum(dy * (x - mean)) * invStd (the sum over dy * xhat).
IMERGE_HOST_DEVICE inline void parameterGradientsAt(int64_t c, const ChannelSums& sums,
                                                    float invStd, float* gradWeight,
                                                    float* gradBias) {
  gradBias[c] = static_cast<float>(sums.gradOutput);
  gradWeight[c] = static_cast<float>(sums.gradOutputCentred * invStd);
}

}  // namespace imerge::cuda::batch_norm_math
