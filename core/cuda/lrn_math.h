// The per-element arithmetic of the own LRN kernel of core/cuda/lrn.cu (the path for sizes
// cuDNN cannot do as PyTorch does: even sizes, and options outside cuDNN's limits), as inline
// functions that compile for the device (nvcc) and for the host (plain g++), so that
// tests/core/cuda_kernel_math_test.cpp checks them against the CPU kernels without a GPU.
//
// PyTorch's nn.LocalResponseNorm, as core/cpu/lrn.h states it, over one image x [C, P] (P = H*W):
//   scale[c] = k + alpha / size * sum_{j = c - size/2}^{c + (size-1)/2} x[j]^2   (zeros outside)
//   out[c]   = x[c] * scale[c]^-beta
// and its gradient, with through[c] = dy[c] * x[c] * scale[c]^(-beta-1):
//   dx[j] = dy[j] * scale[j]^-beta - 2 alpha beta / size * x[j] * sum_{c : j in window(c)}
//   through[c]
// where j is in window(c) exactly when c runs from j - (size-1)/2 to j + size/2.
//
// The sums run in increasing channel order and the subtraction term by term, as on the CPU.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/cuda/host_device.h"

namespace imerge::cuda::lrn {

// PyTorch's window around channel c: `before` channels below it and `after` above.
struct ChannelWindow {
  int64_t before;
  int64_t after;
};

IMERGE_HOST_DEVICE inline ChannelWindow channelWindow(int64_t size) {
  return {size / 2, (size - 1) / 2};
}

IMERGE_HOST_DEVICE inline float power(float base, float exponent) {
#ifdef __CUDA_ARCH__
  return powf(base, exponent);
#else
  return std::pow(base, exponent);
#endif
}

// The LRN options as the kernels use them.
struct LrnCoefficients {
  int64_t size;
  float alphaOverSize;  // alpha / size, in float as on the CPU
  float beta;
  float k;
  float gradFactor;  // 2 alpha beta / size
};

IMERGE_HOST_DEVICE inline LrnCoefficients coefficients(int64_t size, float alpha, float beta,
                                                       float k) {
  return {size, alpha / static_cast<float>(size), beta, k,
          2.0f * alpha * beta / static_cast<float>(size)};
}

// image [C, P] -> scale of channel c at pixel p.
IMERGE_HOST_DEVICE inline float lrnScale(const float* image, int64_t channels, int64_t planeSize,
                                         int64_t c, int64_t p, const LrnCoefficients& lrn) {
  const ChannelWindow window = channelWindow(lrn.size);
  const int64_t first = c - window.before > 0 ? c - window.before : 0;
  const int64_t last = c + window.after < channels - 1 ? c + window.after : channels - 1;
  float sum = 0.0f;
  for (int64_t j = first; j <= last; ++j) {
    const float x = image[j * planeSize + p];
    sum += x * x;
  }
  return lrn.k + lrn.alphaOverSize * sum;
}

IMERGE_HOST_DEVICE inline float lrnOutput(float x, float scale, const LrnCoefficients& lrn) {
  return x * power(scale, -lrn.beta);
}

// dy * x * scale^(-beta-1): what channel c passes back to every channel of its window.
IMERGE_HOST_DEVICE inline float lrnThrough(float gradOutput, float x, float scale,
                                           const LrnCoefficients& lrn) {
  return gradOutput * x * power(scale, -lrn.beta - 1.0f);
}

// gradOutput, input, scale, through: one image [C, P] each -> the gradient of channel j at
// pixel p.
IMERGE_HOST_DEVICE inline float lrnGradInput(const float* gradOutput, const float* input,
                                             const float* scale, const float* through,
                                             int64_t channels, int64_t planeSize, int64_t j,
                                             int64_t p, const LrnCoefficients& lrn) {
  const ChannelWindow window = channelWindow(lrn.size);
  const int64_t self = j * planeSize + p;
  const int64_t first = j - window.after > 0 ? j - window.after : 0;
  const int64_t last = j + window.before < channels - 1 ? j + window.before : channels - 1;
  float gradient = gradOutput[self] * power(scale[self], -lrn.beta);
  for (int64_t c = first; c <= last; ++c) {
    gradient -= lrn.gradFactor * input[self] * through[c * planeSize + p];
  }
  return gradient;
}

}  // namespace imerge::cuda::lrn
