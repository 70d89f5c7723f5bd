// The per-element arithmetic of the CUDA pooling kernels (core/cuda/pooling.cu), as inline
// functions that compile both for the device (nvcc) and for the host (plain g++), so that
// tests/core/cuda_kernel_math_test.cpp runs exactly this indexing against the CPU kernels on a
// machine without a GPU.
//
// Contract, identical to core/cpu/pooling.h (which follows PyTorch):
//  - output sizes: cpu::pooledShape(), ceil mode included, computed on the host;
//  - a strided window along one axis starts at i * stride - padding and is kernel long; it is
//    clipped to the input for the sum or the max, while with count_include_pad its divisor runs
//    to the end of the real padding (paddingEnd after the input, which may differ from the
//    padding before it) but never into the extra right padding of ceil mode;
//  - adaptive windows: start = floor(i * H / H_out), end = ceil((i + 1) * H / H_out);
//  - max: the first maximum in row-major order wins, a NaN wins whenever it is seen (so the last
//    NaN of a window), and the winner is recorded as its index within its H * W plane;
//  - backward in gather form: an input element sums, in increasing output order, the gradient
//    of every output whose window holds it (divided by that window's divisor), or, for max, of
//    every output that picked it. Deterministic, no atomics, and the same summation order as the
//    CPU's scatter loops.
//
// Plain C++17 (the .cu files are C++17); no CUDA headers needed.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>

#include "core/cpu/pooling.h"
#include "core/cuda/host_device.h"

namespace imerge::cuda::pooling {

// The sizes of one (n, c) plane and the window options of a strided pooling. Adaptive pooling
// uses only the four sizes.
struct PoolGeometry {
  int64_t height, width;        // input plane
  int64_t outHeight, outWidth;  // output plane
  int64_t kernelHeight, kernelWidth;
  int64_t strideHeight, strideWidth;
  int64_t paddingHeight, paddingWidth;        // before the input (top, left)
  int64_t paddingEndHeight, paddingEndWidth;  // after it (bottom, right)
};

// One output position's window along one axis: input rows [start, end) and the count this axis
// contributes to the divisor (heightCount * widthCount is the window's divisor).
struct AxisWindow {
  int64_t start;
  int64_t end;
  int64_t count;
};

// The outputs along one axis whose windows hold a given input row: [first, last], empty when
// first > last.
struct OutputRange {
  int64_t first;
  int64_t last;
};

struct MaxAndIndex {
  float value;
  int32_t index;  // within the H * W plane
};

IMERGE_HOST_DEVICE inline bool isNan(float value) {
#ifdef __CUDA_ARCH__
  return isnan(value);
#else
  return std::isnan(value);
#endif
}

IMERGE_HOST_DEVICE inline int64_t minIndex(int64_t a, int64_t b) {
  return a < b ? a : b;
}
IMERGE_HOST_DEVICE inline int64_t maxIndex(int64_t a, int64_t b) {
  return a > b ? a : b;
}

// The geometry the kernels get (host side): pooling [N, C, H, W] to outputShape
// [N, C, Ho, Wo] with strided windows, or with adaptive ones (which use only the four sizes).
inline PoolGeometry stridedGeometry(const Shape& inputShape, const Shape& outputShape,
                                    const cpu::Pool2dParams& params) {
  const auto& [kernel, stride, padding, ceilMode, paddingEndOption] = params;
  const std::array<int64_t, 2> paddingEnd = params.end();
  return {inputShape[2], inputShape[3], outputShape[2], outputShape[3],
          kernel[0],     kernel[1],     stride[0],      stride[1],
          padding[0],    padding[1],    paddingEnd[0],  paddingEnd[1]};
}

inline PoolGeometry adaptiveGeometry(const Shape& inputShape, const Shape& outputShape) {
  return {inputShape[2], inputShape[3], outputShape[2], outputShape[3], 0, 0, 0, 0, 0, 0, 0, 0};
}

// Window i of a strided pooling along one axis, `padding` before the input and `paddingEnd`
// after it.
IMERGE_HOST_DEVICE inline AxisWindow strideWindow(int64_t i, int64_t inputSize, int64_t kernel,
                                                  int64_t stride, int64_t padding,
                                                  int64_t paddingEnd, bool countIncludePad) {
  int64_t start = i * stride - padding;
  int64_t end = minIndex(start + kernel, inputSize + paddingEnd);
  const int64_t paddedCount = end - start;
  start = maxIndex(start, 0);
  end = minIndex(end, inputSize);
  return {start, end, countIncludePad ? paddedCount : end - start};
}

// Window i of an adaptive pooling along one axis.
IMERGE_HOST_DEVICE inline AxisWindow adaptiveWindow(int64_t i, int64_t inputSize,
                                                    int64_t outputSize) {
  const int64_t start = (i * inputSize) / outputSize;                       // floor
  const int64_t end = ((i + 1) * inputSize + outputSize - 1) / outputSize;  // ceil
  return {start, end, end - start};
}

// The strided windows holding input row h (0 <= h < inputSize): window o holds h exactly when
// o * stride - padding <= h < o * stride - padding + kernel (clipping to the input and to the
// real padding removes no input row), so o runs from ceil((h + padding - kernel + 1) / stride)
// to floor((h + padding) / stride), within [0, outputSize).
IMERGE_HOST_DEVICE inline OutputRange stridedOutputsContaining(int64_t h, int64_t outputSize,
                                                               int64_t kernel, int64_t stride,
                                                               int64_t padding) {
  const int64_t shifted = h + padding;
  const int64_t first = shifted < kernel ? 0 : (shifted - kernel) / stride + 1;
  const int64_t last = minIndex(shifted / stride, outputSize - 1);
  return {first, last};
}

// The adaptive windows holding input row h: floor(o * H / Ho) <= h exactly when
// o <= ceil((h + 1) * Ho / H) - 1, and ceil((o + 1) * H / Ho) > h exactly when
// o >= floor(h * Ho / H). Both bounds lie within [0, Ho) for 0 <= h < H.
IMERGE_HOST_DEVICE inline OutputRange adaptiveOutputsContaining(int64_t h, int64_t inputSize,
                                                                int64_t outputSize) {
  const int64_t first = (h * outputSize) / inputSize;
  const int64_t last = ((h + 1) * outputSize + inputSize - 1) / inputSize - 1;
  return {first, last};
}

// ---- forward: one output element of one plane ------------------------------------------------

// plane [H, W] -> the maximum over output (oh, ow)'s window and its index in the plane. Windows
// are never empty: the callers' checks (padding at most half the kernel) and ceil mode's rule
// (no window starts in the right padding) guarantee at least one input element.
IMERGE_HOST_DEVICE inline MaxAndIndex maxPoolOutput(const float* plane, const PoolGeometry& g,
                                                    int64_t oh, int64_t ow) {
  const AxisWindow rows = strideWindow(oh, g.height, g.kernelHeight, g.strideHeight,
                                       g.paddingHeight, g.paddingEndHeight, false);
  const AxisWindow columns = strideWindow(ow, g.width, g.kernelWidth, g.strideWidth, g.paddingWidth,
                                          g.paddingEndWidth, false);
  int64_t bestIndex = rows.start * g.width + columns.start;
  float best = plane[bestIndex];
  for (int64_t h = rows.start; h < rows.end; ++h) {
    for (int64_t w = columns.start; w < columns.end; ++w) {
      const float value = plane[h * g.width + w];
      if (value > best || isNan(value)) {
        best = value;
        bestIndex = h * g.width + w;
      }
    }
  }
  return {best, static_cast<int32_t>(bestIndex)};
}

// The sum over [rows] x [columns] of plane [H, W], row by row, divided by the window's divisor.
IMERGE_HOST_DEVICE inline float windowAverage(const float* plane, int64_t width,
                                              const AxisWindow& rows, const AxisWindow& columns) {
  float sum = 0.0f;
  for (int64_t h = rows.start; h < rows.end; ++h) {
    for (int64_t w = columns.start; w < columns.end; ++w) sum += plane[h * width + w];
  }
  const int64_t divisor = rows.count * columns.count;
  return divisor > 0 ? sum / static_cast<float>(divisor) : 0.0f;
}

IMERGE_HOST_DEVICE inline float avgPoolOutput(const float* plane, const PoolGeometry& g,
                                              bool countIncludePad, int64_t oh, int64_t ow) {
  return windowAverage(plane, g.width,
                       strideWindow(oh, g.height, g.kernelHeight, g.strideHeight, g.paddingHeight,
                                    g.paddingEndHeight, countIncludePad),
                       strideWindow(ow, g.width, g.kernelWidth, g.strideWidth, g.paddingWidth,
                                    g.paddingEndWidth, countIncludePad));
}

IMERGE_HOST_DEVICE inline float adaptiveAvgPoolOutput(const float* plane, const PoolGeometry& g,
                                                      int64_t oh, int64_t ow) {
  return windowAverage(plane, g.width, adaptiveWindow(oh, g.height, g.outHeight),
                       adaptiveWindow(ow, g.width, g.outWidth));
}

// ---- backward: one input element of one plane (gather form) ---------------------------------

// gradOutput [Ho, Wo], argmax [Ho, Wo] -> the gradient of input (h, w): the sum of the gradients
// of the outputs that picked it, in increasing output order.
IMERGE_HOST_DEVICE inline float maxPoolGradInput(const float* gradOutput, const int32_t* argmax,
                                                 const PoolGeometry& g, int64_t h, int64_t w) {
  const OutputRange rows =
      stridedOutputsContaining(h, g.outHeight, g.kernelHeight, g.strideHeight, g.paddingHeight);
  const OutputRange columns =
      stridedOutputsContaining(w, g.outWidth, g.kernelWidth, g.strideWidth, g.paddingWidth);
  const int64_t self = h * g.width + w;
  float sum = 0.0f;
  for (int64_t oh = rows.first; oh <= rows.last; ++oh) {
    for (int64_t ow = columns.first; ow <= columns.last; ++ow) {
      const int64_t output = oh * g.outWidth + ow;
      if (argmax[output] == self) sum += gradOutput[output];
    }
  }
  return sum;
}

// gradOutput [Ho, Wo] -> the gradient of input (h, w): each holding window's gradient divided by
// that window's divisor, summed in increasing output order.
IMERGE_HOST_DEVICE inline float avgPoolGradInput(const float* gradOutput, const PoolGeometry& g,
                                                 bool countIncludePad, int64_t h, int64_t w) {
  const OutputRange rows =
      stridedOutputsContaining(h, g.outHeight, g.kernelHeight, g.strideHeight, g.paddingHeight);
  const OutputRange columns =
      stridedOutputsContaining(w, g.outWidth, g.kernelWidth, g.strideWidth, g.paddingWidth);
  float sum = 0.0f;
  for (int64_t oh = rows.first; oh <= rows.last; ++oh) {
    const int64_t rowCount = strideWindow(oh, g.height, g.kernelHeight, g.strideHeight,
                                          g.paddingHeight, g.paddingEndHeight, countIncludePad)
                                 .count;
    for (int64_t ow = columns.first; ow <= columns.last; ++ow) {
      const int64_t columnCount = strideWindow(ow, g.width, g.kernelWidth, g.strideWidth,
                                               g.paddingWidth, g.paddingEndWidth, countIncludePad)
                                      .count;
      const int64_t divisor = rowCount * columnCount;
      if (divisor > 0) sum += gradOutput[oh * g.outWidth + ow] / static_cast<float>(divisor);
    }
  }
  return sum;
}

IMERGE_HOST_DEVICE inline float adaptiveAvgPoolGradInput(const float* gradOutput,
                                                         const PoolGeometry& g, int64_t h,
                                                         int64_t w) {
  const OutputRange rows = adaptiveOutputsContaining(h, g.height, g.outHeight);
  const OutputRange columns = adaptiveOutputsContaining(w, g.width, g.outWidth);
  float sum = 0.0f;
  for (int64_t oh = rows.first; oh <= rows.last; ++oh) {
    const int64_t rowCount = adaptiveWindow(oh, g.height, g.outHeight).count;
    for (int64_t ow = columns.first; ow <= columns.last; ++ow) {
      const int64_t divisor = rowCount * adaptiveWindow(ow, g.width, g.outWidth).count;
      sum += gradOutput[oh * g.outWidth + ow] / static_cast<float>(divisor);
    }
  }
  return sum;
}

}  // namespace imerge::cuda::pooling
