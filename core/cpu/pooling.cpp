#include "core/cpu/pooling.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/cpu/dnnl_context.h"

namespace imerge::cpu {

namespace {

using dnnl::algorithm;
using dnnl::memory;
using dnnl::pooling_backward;
using dnnl::pooling_forward;
using dnnl::prop_kind;

void checkInput(const char* op, const Tensor& input) {
  checkPoolInput(op, input);
  IMERGE_CHECK(input.device().type() == DeviceType::CPU, op, ": input ", input.describe(),
               " is on ", input.device().name(), ", this kernel runs on the CPU");
}

memory::dims dims(const Shape& shape) {
  return memory::dims(shape.begin(), shape.end());
}

memory::desc planeDesc(const Shape& shape) {
  return memory::desc(dims(shape), memory::data_type::f32, memory::format_tag::nchw);
}

memory wrap(const memory::desc& desc, const Tensor& tensor) {
  return memory(desc, dnnlEngine(), tensor.rawData());
}

// Right padding that makes oneDNN produce exactly `outputSize` windows: the end padding, or more
// in ceil mode, where the last window hangs over the input's end.
int64_t rightPadding(int64_t inputSize, int64_t outputSize, int64_t kernel, int64_t stride,
                     int64_t padding) {
  return (outputSize - 1) * stride + kernel - inputSize - padding;
}

std::string poolKey(const char* kind, const Shape& inputShape, const Shape& outputShape,
                    const Pool2dParams& params) {
  return detail::concat(kind, " ", shapeToString(inputShape), "->", shapeToString(outputShape),
                        " k", params.kernel[0], "x", params.kernel[1], " s", params.stride[0], "x",
                        params.stride[1], " p", params.padding[0], "x", params.padding[1], " e",
                        params.end()[0], "x", params.end()[1]);
}

pooling_forward::desc forwardDesc(prop_kind propagation, algorithm kind, const Shape& inputShape,
                                  const Shape& outputShape, const Pool2dParams& params) {
  const auto& [kernel, stride, padding, ceilMode, paddingEnd] = params;
  const memory::dims right = {
      rightPadding(inputShape[2], outputShape[2], kernel[0], stride[0], padding[0]),
      rightPadding(inputShape[3], outputShape[3], kernel[1], stride[1], padding[1])};
  return pooling_forward::desc(propagation, kind, planeDesc(inputShape), planeDesc(outputShape),
                               {stride[0], stride[1]}, {kernel[0], kernel[1]},
                               {padding[0], padding[1]}, right);
}

struct ForwardEntry {
  pooling_forward::primitive_desc descriptor;
  pooling_forward primitive;
};

struct BackwardEntry {
  pooling_backward::primitive_desc descriptor;
  pooling_backward primitive;
};

PrimitiveCache<ForwardEntry>& forwardCache() {
  static PrimitiveCache<ForwardEntry> cache;
  return cache;
}

PrimitiveCache<BackwardEntry>& backwardCache() {
  static PrimitiveCache<BackwardEntry> cache;
  return cache;
}

ForwardEntry& forwardPrimitive(prop_kind propagation, algorithm kind, const Shape& inputShape,
                               const Shape& outputShape, const Pool2dParams& params) {
  const std::string key =
      detail::concat(poolKey("pool_fwd", inputShape, outputShape, params), " alg",
                     static_cast<int>(kind), " prop", static_cast<int>(propagation));
  return forwardCache().getOrBuild(key, [&] {
    pooling_forward::primitive_desc descriptor(
        forwardDesc(propagation, kind, inputShape, outputShape, params), dnnlEngine());
    return ForwardEntry{descriptor, pooling_forward(descriptor)};
  });
}

BackwardEntry& backwardPrimitive(algorithm kind, const Shape& inputShape, const Shape& outputShape,
                                 const Pool2dParams& params) {
  const std::string key = detail::concat(poolKey("pool_bwd", inputShape, outputShape, params),
                                         " alg", static_cast<int>(kind));
  return backwardCache().getOrBuild(key, [&] {
    // oneDNN wants the forward descriptor as a hint (it fixes the workspace's layout).
    const ForwardEntry& forward =
        forwardPrimitive(prop_kind::forward_training, kind, inputShape, outputShape, params);
    const auto& [kernel, stride, padding, ceilMode, paddingEnd] = params;
    const memory::dims right = {
        rightPadding(inputShape[2], outputShape[2], kernel[0], stride[0], padding[0]),
        rightPadding(inputShape[3], outputShape[3], kernel[1], stride[1], padding[1])};
    pooling_backward::desc desc(kind, planeDesc(inputShape), planeDesc(outputShape),
                                {stride[0], stride[1]}, {kernel[0], kernel[1]},
                                {padding[0], padding[1]}, right);
    pooling_backward::primitive_desc descriptor(desc, dnnlEngine(), forward.descriptor);
    return BackwardEntry{descriptor, pooling_backward(descriptor)};
  });
}

// One output position's window along one axis: input rows [start, end) and the count this
// axis contributes to the divisor. Height and width windows are independent, so a window's
// divisor is heightCount * widthCount for every rule used here.
struct AxisWindow {
  int64_t start;
  int64_t end;
  int64_t count;
};

std::vector<AxisWindow> adaptiveWindows(int64_t inputSize, int64_t outputSize) {
  std::vector<AxisWindow> windows(outputSize);
  for (int64_t i = 0; i < outputSize; ++i) {
    const int64_t start = (i * inputSize) / outputSize;                       // floor
    const int64_t end = ((i + 1) * inputSize + outputSize - 1) / outputSize;  // ceil
    windows[i] = {start, end, end - start};
  }
  return windows;
}

// PyTorch's avg_pool2d windows: with padding counted, the divisor runs to the end of the real
// padding (`paddingEnd` after the input) but never into the extra padding that ceil mode adds.
std::vector<AxisWindow> strideWindows(int64_t inputSize, int64_t outputSize, int64_t kernel,
                                      int64_t stride, int64_t padding, int64_t paddingEnd,
                                      bool countIncludePad) {
  std::vector<AxisWindow> windows(outputSize);
  for (int64_t i = 0; i < outputSize; ++i) {
    int64_t start = i * stride - padding;
    int64_t end = std::min(start + kernel, inputSize + paddingEnd);
    const int64_t paddedCount = end - start;
    start = std::max<int64_t>(start, 0);
    end = std::min(end, inputSize);
    windows[i] = {start, end, countIncludePad ? paddedCount : end - start};
  }
  return windows;
}

// Average pooling by direct loops over precomputed windows, one (n, c) plane per task.
void windowedAverageForward(const Tensor& input, Tensor& output,
                            const std::vector<AxisWindow>& rows,
                            const std::vector<AxisWindow>& columns) {
  const int64_t planes = input.dim(0) * input.dim(1);
  const int64_t height = input.dim(2), width = input.dim(3);
  const int64_t outHeight = output.dim(2), outWidth = output.dim(3);
  const float* x = input.data<float>();  // [planes, H, W]
  float* y = output.data<float>();       // [planes, H_out, W_out]
#pragma omp parallel for schedule(static)
  for (int64_t plane = 0; plane < planes; ++plane) {
    const float* xPlane = x + plane * height * width;
    float* yPlane = y + plane * outHeight * outWidth;
    for (int64_t oh = 0; oh < outHeight; ++oh) {
      const AxisWindow& row = rows[oh];
      for (int64_t ow = 0; ow < outWidth; ++ow) {
        const AxisWindow& column = columns[ow];
        float sum = 0.0f;
        for (int64_t h = row.start; h < row.end; ++h) {
          const float* xRow = xPlane + h * width;
#pragma omp simd reduction(+ : sum)
          for (int64_t w = column.start; w < column.end; ++w) sum += xRow[w];
        }
        const int64_t divisor = row.count * column.count;
        yPlane[oh * outWidth + ow] = divisor > 0 ? sum / static_cast<float>(divisor) : 0.0f;
      }
    }
  }
}

void windowedAverageBackward(const Tensor& gradOutput, Tensor& gradInput,
                             const std::vector<AxisWindow>& rows,
                             const std::vector<AxisWindow>& columns) {
  const int64_t planes = gradInput.dim(0) * gradInput.dim(1);
  const int64_t height = gradInput.dim(2), width = gradInput.dim(3);
  const int64_t outHeight = gradOutput.dim(2), outWidth = gradOutput.dim(3);
  const float* dy = gradOutput.data<float>();  // [planes, H_out, W_out]
  float* dx = gradInput.data<float>();         // [planes, H, W]
#pragma omp parallel for schedule(static)
  for (int64_t plane = 0; plane < planes; ++plane) {
    const float* dyPlane = dy + plane * outHeight * outWidth;
    float* dxPlane = dx + plane * height * width;
    std::fill(dxPlane, dxPlane + height * width, 0.0f);
    for (int64_t oh = 0; oh < outHeight; ++oh) {
      const AxisWindow& row = rows[oh];
      for (int64_t ow = 0; ow < outWidth; ++ow) {
        const AxisWindow& column = columns[ow];
        const int64_t divisor = row.count * column.count;
        if (divisor == 0) continue;
        const float share = dyPlane[oh * outWidth + ow] / static_cast<float>(divisor);
        for (int64_t h = row.start; h < row.end; ++h) {
          float* dxRow = dxPlane + h * width;
#pragma omp simd
          for (int64_t w = column.start; w < column.end; ++w) dxRow[w] += share;
        }
      }
    }
  }
}

// Max pooling by direct loops, one (n, c) plane per task. The workspace records each window's
// winner as an index into its input plane: the first maximum in row-major order, and NaN wins
// as soon as it is seen, both as in PyTorch.
//
// The columns whose window lies wholly inside the input form one range, in which each window
// starts `strideWidth` after the one before. There the loop over output columns runs innermost,
// so that the compiler vectorises it; every window still visits its elements in row-major
// order, so the winners are the same. The clipped windows at the edges keep the simple loop.
template <bool kRecordArgmax>
void windowedMaxForward(const Tensor& input, Tensor& output, Tensor& argmax,
                        const std::vector<AxisWindow>& rows, const std::vector<AxisWindow>& columns,
                        int64_t kernelWidth, int64_t strideWidth) {
  const int64_t planes = input.dim(0) * input.dim(1);
  const int64_t height = input.dim(2), width = input.dim(3);
  const int64_t outHeight = output.dim(2), outWidth = output.dim(3);
  const float* x = input.data<float>();                                 // [planes, H, W]
  float* y = output.data<float>();                                      // [planes, H_out, W_out]
  int32_t* winners = kRecordArgmax ? argmax.data<int32_t>() : nullptr;  // [planes, H_out, W_out]
  const auto unclipped = [&](int64_t ow) {
    return columns[ow].end - columns[ow].start == kernelWidth;
  };
  int64_t interiorBegin = 0, interiorEnd = outWidth;
  while (interiorBegin < outWidth && !unclipped(interiorBegin)) ++interiorBegin;
  while (interiorEnd > interiorBegin && !unclipped(interiorEnd - 1)) --interiorEnd;
  const int64_t interiorStart = interiorBegin < interiorEnd ? columns[interiorBegin].start : 0;
  const int64_t interiorCount = interiorEnd - interiorBegin;
#pragma omp parallel for schedule(static)
  for (int64_t plane = 0; plane < planes; ++plane) {
    const float* xPlane = x + plane * height * width;
    const int64_t outputOffset = plane * outHeight * outWidth;
    for (int64_t oh = 0; oh < outHeight; ++oh) {
      const AxisWindow& row = rows[oh];
      float* yRow = y + outputOffset + oh * outWidth;
      int32_t* winnerRow = kRecordArgmax ? winners + outputOffset + oh * outWidth : nullptr;
      const auto clippedWindow = [&](int64_t ow) {
        const AxisWindow& column = columns[ow];
        int64_t bestIndex = row.start * width + column.start;
        float best = xPlane[bestIndex];
        for (int64_t h = row.start; h < row.end; ++h) {
          for (int64_t w = column.start; w < column.end; ++w) {
            // Selects rather than branches: on real activations the winner's position is
            // random, and mispredicted branches cost more than the compares.
            const float value = xPlane[h * width + w];
            const bool wins = value > best || std::isnan(value);
            best = wins ? value : best;
            bestIndex = wins ? h * width + w : bestIndex;
          }
        }
        yRow[ow] = best;
        if constexpr (kRecordArgmax) winnerRow[ow] = static_cast<int32_t>(bestIndex);
      };
      for (int64_t ow = 0; ow < interiorBegin; ++ow) clippedWindow(ow);
      for (int64_t ow = interiorEnd; ow < outWidth; ++ow) clippedWindow(ow);
      // The interior: best and bestIndex (the output row) hold each window's best so far.
      float* best = yRow + interiorBegin;
      int32_t* bestIndex = kRecordArgmax ? winnerRow + interiorBegin : nullptr;
      for (int64_t i = 0; i < interiorCount; ++i) {
        const int64_t first = row.start * width + interiorStart + i * strideWidth;
        best[i] = xPlane[first];
        if constexpr (kRecordArgmax) bestIndex[i] = static_cast<int32_t>(first);
      }
      for (int64_t h = row.start; h < row.end; ++h) {
        for (int64_t j = 0; j < kernelWidth; ++j) {
          const int64_t offset = h * width + interiorStart + j;
          const float* from = xPlane + offset;
#pragma omp simd
          for (int64_t i = 0; i < interiorCount; ++i) {
            const float value = from[i * strideWidth];
            const bool wins = value > best[i] || std::isnan(value);
            best[i] = wins ? value : best[i];
            if constexpr (kRecordArgmax) {
              const int32_t index = static_cast<int32_t>(offset + i * strideWidth);
              bestIndex[i] = wins ? index : bestIndex[i];
            }
          }
        }
      }
    }
  }
}

// oneDNN's include-padding divisor is the full kernel; PyTorch's stops at the real padding.
// They agree unless ceil mode pushes a window past the real padding.
bool oneDnnMatchesAverage(const Shape& inputShape, const Shape& outputShape,
                          const Pool2dParams& params, bool countIncludePad) {
  if (!countIncludePad) return true;
  for (int axis = 0; axis < 2; ++axis) {
    const int64_t lastEnd = (outputShape[2 + axis] - 1) * params.stride[axis] -
                            params.padding[axis] + params.kernel[axis];
    if (lastEnd > inputShape[2 + axis] + params.end()[axis]) return false;
  }
  return true;
}

algorithm averageAlgorithm(bool countIncludePad) {
  return countIncludePad ? algorithm::pooling_avg_include_padding
                         : algorithm::pooling_avg_exclude_padding;
}

}  // namespace

int64_t pooledSize(int64_t inputSize, int64_t kernel, int64_t stride, int64_t padding,
                   bool ceilMode) {
  return pooledSize(inputSize, kernel, stride, padding, padding, ceilMode);
}

int64_t pooledSize(int64_t inputSize, int64_t kernel, int64_t stride, int64_t padding,
                   int64_t paddingEnd, bool ceilMode) {
  const int64_t span = inputSize + padding + paddingEnd - kernel;
  int64_t size = (ceilMode ? (span + stride - 1) / stride : span / stride) + 1;
  if (ceilMode && (size - 1) * stride >= inputSize + padding) --size;
  return size;
}

void checkPoolInput(const char* op, const Tensor& input) {
  IMERGE_CHECK(input.defined(), op, ": input is undefined");
  IMERGE_CHECK(input.dtype() == DType::Float32, op, ": input ", input.describe(),
               " must be float32");
  IMERGE_CHECK(input.ndim() == 4, op, ": input ", input.describe(),
               " must have 4 dimensions [N, C, H, W]");
  IMERGE_CHECK(input.dim(2) > 0 && input.dim(3) > 0, op, ": input ", input.describe(),
               " has an empty H x W plane");
}

Shape pooledShape(const char* op, const Shape& inputShape, const Pool2dParams& params) {
  IMERGE_CHECK(inputShape.size() == 4, op, ": input shape ", shapeToString(inputShape),
               " must have 4 dimensions [N, C, H, W]");
  const auto& [kernel, stride, padding, ceilMode, paddingEndOption] = params;
  const std::array<int64_t, 2> paddingEnd = params.end();
  for (int axis = 0; axis < 2; ++axis) {
    IMERGE_CHECK(kernel[axis] > 0 && stride[axis] > 0 && padding[axis] >= 0, op, ": kernel ",
                 kernel[0], "x", kernel[1], ", stride ", stride[0], "x", stride[1],
                 " must be positive and padding ", padding[0], "x", padding[1],
                 " non-negative (input ", shapeToString(inputShape), ")");
    IMERGE_CHECK(padding[axis] * 2 <= kernel[axis], op, ": padding ", padding[0], "x", padding[1],
                 " must be at most half of kernel ", kernel[0], "x", kernel[1], " (input ",
                 shapeToString(inputShape), ")");
    // The same rule at the end: every window then holds at least one input element.
    IMERGE_CHECK(paddingEnd[axis] >= 0 && paddingEnd[axis] * 2 <= kernel[axis], op,
                 ": padding end ", paddingEnd[0], "x", paddingEnd[1],
                 " must be non-negative and at most half of kernel ", kernel[0], "x", kernel[1],
                 " (input ", shapeToString(inputShape), ")");
  }
  const int64_t paddedHeight = inputShape[2] + padding[0] + paddingEnd[0];
  const int64_t paddedWidth = inputShape[3] + padding[1] + paddingEnd[1];
  IMERGE_CHECK(
      kernel[0] <= paddedHeight && kernel[1] <= paddedWidth, op, ": kernel ", kernel[0], "x",
      kernel[1], " larger than padded input ", paddedHeight, "x", paddedWidth, " (input float32",
      shapeToString(inputShape), ", padding ", padding[0], "x", padding[1],
      params.symmetric() ? "" : " before and ",
      params.symmetric() ? "" : detail::concat(paddingEnd[0], "x", paddingEnd[1], " after"), ")");
  return {inputShape[0], inputShape[1],
          pooledSize(inputShape[2], kernel[0], stride[0], padding[0], paddingEnd[0], ceilMode),
          pooledSize(inputShape[3], kernel[1], stride[1], padding[1], paddingEnd[1], ceilMode)};
}

void checkPoolGradOutput(const char* op, const Tensor& gradOutput, const Shape& outputShape) {
  IMERGE_CHECK(gradOutput.defined() && gradOutput.dtype() == DType::Float32 &&
                   gradOutput.shape() == outputShape,
               op, ": gradient of the output ",
               gradOutput.defined() ? gradOutput.describe() : std::string("(undefined)"),
               " does not match the output float32", shapeToString(outputShape));
}

Shape adaptivePooledShape(const Tensor& input, std::array<int64_t, 2> outputSize) {
  IMERGE_CHECK(outputSize[0] > 0 && outputSize[1] > 0, "adaptiveAvgPool2d: output size ",
               outputSize[0], "x", outputSize[1], " must be positive (input ", input.describe(),
               ")");
  return {input.dim(0), input.dim(1), outputSize[0], outputSize[1]};
}

void checkAdaptivePoolGradOutput(const Tensor& gradOutput, const Shape& inputShape) {
  IMERGE_CHECK(inputShape.size() == 4 && gradOutput.defined() && gradOutput.ndim() == 4 &&
                   gradOutput.dtype() == DType::Float32 && gradOutput.dim(0) == inputShape[0] &&
                   gradOutput.dim(1) == inputShape[1] && gradOutput.dim(2) > 0 &&
                   gradOutput.dim(3) > 0,
               "adaptiveAvgPool2d backward: gradient of the output ",
               gradOutput.defined() ? gradOutput.describe() : std::string("(undefined)"),
               " does not fit input float32", shapeToString(inputShape));
}

MaxPool2dResult maxPool2dForward(const Tensor& input, const Pool2dParams& params,
                                 bool keepWorkspace) {
  checkInput("maxPool2d", input);
  const Shape outputShape = pooledShape("maxPool2d", input.shape(), params);
  const auto& [kernel, stride, padding, ceilMode, paddingEndOption] = params;
  const std::array<int64_t, 2> paddingEnd = params.end();
  MaxPool2dResult result;
  result.output = Tensor::empty(outputShape);
  if (keepWorkspace) result.workspace = Tensor::empty(outputShape, DType::Int32);
  // Padding never wins a max, so the windows are clipped to the input; the include-pad
  // count they carry is unused here.
  const std::vector<AxisWindow> rows = strideWindows(input.dim(2), outputShape[2], kernel[0],
                                                     stride[0], padding[0], paddingEnd[0], false);
  const std::vector<AxisWindow> columns = strideWindows(
      input.dim(3), outputShape[3], kernel[1], stride[1], padding[1], paddingEnd[1], false);
  if (keepWorkspace) {
    windowedMaxForward<true>(input, result.output, result.workspace, rows, columns, kernel[1],
                             stride[1]);
  } else {
    windowedMaxForward<false>(input, result.output, result.workspace, rows, columns, kernel[1],
                              stride[1]);
  }
  return result;
}

Tensor maxPool2dBackward(const Tensor& gradOutput, const Tensor& workspace, const Shape& inputShape,
                         const Pool2dParams& params) {
  const Shape outputShape = pooledShape("maxPool2d backward", inputShape, params);
  checkPoolGradOutput("maxPool2d backward", gradOutput, outputShape);
  IMERGE_CHECK(
      workspace.defined() && workspace.dtype() == DType::Int32 && workspace.shape() == outputShape,
      "maxPool2d backward: no argmax workspace int32", shapeToString(outputShape),
      " for input float32", shapeToString(inputShape), "; run the forward with keepWorkspace");
  const int64_t planes = inputShape[0] * inputShape[1];
  const int64_t planeSize = inputShape[2] * inputShape[3];
  const int64_t outputPlaneSize = outputShape[2] * outputShape[3];
  Tensor gradInput = Tensor::empty(inputShape);
  const float* dy = gradOutput.data<float>();         // [planes, H_out * W_out]
  const int32_t* argmax = workspace.data<int32_t>();  // [planes, H_out * W_out]
  float* dx = gradInput.data<float>();                // [planes, H * W]
#pragma omp parallel for schedule(static)
  for (int64_t plane = 0; plane < planes; ++plane) {
    float* dxPlane = dx + plane * planeSize;
    std::fill(dxPlane, dxPlane + planeSize, 0.0f);
    const float* dyPlane = dy + plane * outputPlaneSize;
    const int32_t* argmaxPlane = argmax + plane * outputPlaneSize;
    // Overlapping windows (stride < kernel) can share a winner, hence +=.
    for (int64_t i = 0; i < outputPlaneSize; ++i) dxPlane[argmaxPlane[i]] += dyPlane[i];
  }
  return gradInput;
}

Tensor avgPool2dForward(const Tensor& input, const Pool2dParams& params, bool countIncludePad) {
  checkInput("avgPool2d", input);
  const Shape outputShape = pooledShape("avgPool2d", input.shape(), params);
  Tensor output = Tensor::empty(outputShape);
  if (!oneDnnMatchesAverage(input.shape(), outputShape, params, countIncludePad)) {
    const auto& [kernel, stride, padding, ceilMode, paddingEndOption] = params;
    const std::array<int64_t, 2> paddingEnd = params.end();
    windowedAverageForward(input, output,
                           strideWindows(input.dim(2), outputShape[2], kernel[0], stride[0],
                                         padding[0], paddingEnd[0], true),
                           strideWindows(input.dim(3), outputShape[3], kernel[1], stride[1],
                                         padding[1], paddingEnd[1], true));
    return output;
  }
  // Inference propagation: average pooling's backward needs no workspace.
  ForwardEntry& entry =
      forwardPrimitive(prop_kind::forward_inference, averageAlgorithm(countIncludePad),
                       input.shape(), outputShape, params);
  entry.primitive.execute(dnnlStream(),
                          {{DNNL_ARG_SRC, wrap(entry.descriptor.src_desc(), input)},
                           {DNNL_ARG_DST, wrap(entry.descriptor.dst_desc(), output)}});
  dnnlStream().wait();
  return output;
}

Tensor avgPool2dBackward(const Tensor& gradOutput, const Shape& inputShape,
                         const Pool2dParams& params, bool countIncludePad) {
  const Shape outputShape = pooledShape("avgPool2d backward", inputShape, params);
  checkPoolGradOutput("avgPool2d backward", gradOutput, outputShape);
  Tensor gradInput = Tensor::empty(inputShape);
  if (!oneDnnMatchesAverage(inputShape, outputShape, params, countIncludePad)) {
    const auto& [kernel, stride, padding, ceilMode, paddingEndOption] = params;
    const std::array<int64_t, 2> paddingEnd = params.end();
    windowedAverageBackward(gradOutput, gradInput,
                            strideWindows(inputShape[2], outputShape[2], kernel[0], stride[0],
                                          padding[0], paddingEnd[0], true),
                            strideWindows(inputShape[3], outputShape[3], kernel[1], stride[1],
                                          padding[1], paddingEnd[1], true));
    return gradInput;
  }
  BackwardEntry& entry =
      backwardPrimitive(averageAlgorithm(countIncludePad), inputShape, outputShape, params);
  entry.primitive.execute(dnnlStream(),
                          {{DNNL_ARG_DIFF_DST, wrap(entry.descriptor.diff_dst_desc(), gradOutput)},
                           {DNNL_ARG_DIFF_SRC, wrap(entry.descriptor.diff_src_desc(), gradInput)}});
  dnnlStream().wait();
  return gradInput;
}

Tensor adaptiveAvgPool2dForward(const Tensor& input, std::array<int64_t, 2> outputSize) {
  checkInput("adaptiveAvgPool2d", input);
  Tensor output = Tensor::empty(adaptivePooledShape(input, outputSize));
  windowedAverageForward(input, output, adaptiveWindows(input.dim(2), outputSize[0]),
                         adaptiveWindows(input.dim(3), outputSize[1]));
  return output;
}

Tensor adaptiveAvgPool2dBackward(const Tensor& gradOutput, const Shape& inputShape) {
  checkAdaptivePoolGradOutput(gradOutput, inputShape);
  const std::array<int64_t, 2> outputSize = {gradOutput.dim(2), gradOutput.dim(3)};
  Tensor gradInput = Tensor::empty(inputShape);
  windowedAverageBackward(gradOutput, gradInput, adaptiveWindows(inputShape[2], outputSize[0]),
                          adaptiveWindows(inputShape[3], outputSize[1]));
  return gradInput;
}

}  // namespace imerge::cpu
