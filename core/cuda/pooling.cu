// 2-D pooling kernels on a CUDA device: one thread per output element forward, one thread per
// input element backward (gather form, see core/cuda/pooling_math.h, which holds all of the
// per-element arithmetic). Grid-stride loops over N * C * plane, so any size fits one launch.
// The operand checks and output shapes are the CPU kernels' (core/cpu/pooling.h).
#include "core/cuda/flat_index.h"
#include "core/cuda/launch.h"
#include "core/cuda/pooling.h"
#include "core/cuda/pooling_math.h"

namespace imerge::cuda {

namespace {

using pooling::PoolGeometry;

void checkOnCuda(const char* op, const char* what, const Tensor& tensor) {
  IMERGE_CHECK(tensor.device().type() == DeviceType::CUDA, op, ": ", what, " ", tensor.describe(),
               " is on ", tensor.device().name(), ", this kernel runs on a CUDA device");
}

// The checks shared with the CPU (core/cpu/pooling.h) come first, so both devices refuse the
// same operands with the same words; then this device's own.
void checkInput(const char* op, const Tensor& input) {
  cpu::checkPoolInput(op, input);
  checkOnCuda(op, "input", input);
}

void checkGradOutput(const char* op, const Tensor& gradOutput, const Shape& outputShape) {
  cpu::checkPoolGradOutput(op, gradOutput, outputShape);
  checkOnCuda(op, "gradient of the output", gradOutput);
}

// ---- kernels ----------------------------------------------------------------------------------

// input [planes, H, W] -> output, argmax [planes, Ho, Wo]; argmax may be null (inference).
__global__ void maxPoolForwardKernel(float* output, int32_t* argmax, const float* input,
                                     PoolGeometry g, int64_t planes) {
  const int64_t n = planes * g.outHeight * g.outWidth;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    const auto [plane, oh, ow] = positionOf(i, g.outHeight, g.outWidth);
    const pooling::MaxAndIndex winner =
        pooling::maxPoolOutput(input + plane * g.height * g.width, g, oh, ow);
    output[i] = winner.value;
    if (argmax != nullptr) argmax[i] = winner.index;
  }
}

// gradOutput, argmax [planes, Ho, Wo] -> gradInput [planes, H, W]
__global__ void maxPoolBackwardKernel(float* gradInput, const float* gradOutput,
                                      const int32_t* argmax, PoolGeometry g, int64_t planes) {
  const int64_t outputPlane = g.outHeight * g.outWidth;
  const int64_t n = planes * g.height * g.width;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    const auto [plane, h, w] = positionOf(i, g.height, g.width);
    gradInput[i] = pooling::maxPoolGradInput(gradOutput + plane * outputPlane,
                                             argmax + plane * outputPlane, g, h, w);
  }
}

// input [planes, H, W] -> output [planes, Ho, Wo]; adaptive windows when `adaptive`.
__global__ void avgPoolForwardKernel(float* output, const float* input, PoolGeometry g,
                                     int64_t planes, bool countIncludePad, bool adaptive) {
  const int64_t n = planes * g.outHeight * g.outWidth;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    const auto [plane, oh, ow] = positionOf(i, g.outHeight, g.outWidth);
    const float* inputPlane = input + plane * g.height * g.width;
    output[i] = adaptive ? pooling::adaptiveAvgPoolOutput(inputPlane, g, oh, ow)
                         : pooling::avgPoolOutput(inputPlane, g, countIncludePad, oh, ow);
  }
}

// gradOutput [planes, Ho, Wo] -> gradInput [planes, H, W]; adaptive windows when `adaptive`.
__global__ void avgPoolBackwardKernel(float* gradInput, const float* gradOutput, PoolGeometry g,
                                      int64_t planes, bool countIncludePad, bool adaptive) {
  const int64_t n = planes * g.height * g.width;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    const auto [plane, h, w] = positionOf(i, g.height, g.width);
    const float* gradPlane = gradOutput + plane * g.outHeight * g.outWidth;
    gradInput[i] = adaptive ? pooling::adaptiveAvgPoolGradInput(gradPlane, g, h, w)
                            : pooling::avgPoolGradInput(gradPlane, g, countIncludePad, h, w);
  }
}

Tensor averageForward(const Tensor& input, const Shape& outputShape, const PoolGeometry& g,
                      bool countIncludePad, bool adaptive, const char* op) {
  Tensor output = Tensor::empty(outputShape, DType::Float32, input.device());
  const int64_t n = output.numel();
  if (n == 0) return output;
  avgPoolForwardKernel<<<blocksFor(n), kThreadsPerBlock, 0, streamOf(input)>>>(
      output.data<float>(), input.data<float>(), g, outputShape[0] * outputShape[1],
      countIncludePad, adaptive);
  checkLaunch(op);
  return output;
}

Tensor averageBackward(const Tensor& gradOutput, const Shape& inputShape, const PoolGeometry& g,
                       bool countIncludePad, bool adaptive, const char* op) {
  Tensor gradInput = Tensor::empty(inputShape, DType::Float32, gradOutput.device());
  const int64_t n = gradInput.numel();
  if (n == 0) return gradInput;
  avgPoolBackwardKernel<<<blocksFor(n), kThreadsPerBlock, 0, streamOf(gradOutput)>>>(
      gradInput.data<float>(), gradOutput.data<float>(), g, inputShape[0] * inputShape[1],
      countIncludePad, adaptive);
  checkLaunch(op);
  return gradInput;
}

}  // namespace

MaxPool2dResult maxPool2dForward(const Tensor& input, const Pool2dParams& params,
                                 bool keepWorkspace) {
  checkInput("maxPool2d", input);
  const Shape outputShape = cpu::pooledShape("maxPool2d", input.shape(), params);
  MaxPool2dResult result;
  result.output = Tensor::empty(outputShape, DType::Float32, input.device());
  if (keepWorkspace) result.workspace = Tensor::empty(outputShape, DType::Int32, input.device());
  const int64_t n = result.output.numel();
  if (n == 0) return result;
  maxPoolForwardKernel<<<blocksFor(n), kThreadsPerBlock, 0, streamOf(input)>>>(
      result.output.data<float>(), keepWorkspace ? result.workspace.data<int32_t>() : nullptr,
      input.data<float>(), pooling::stridedGeometry(input.shape(), outputShape, params),
      outputShape[0] * outputShape[1]);
  checkLaunch("maxPool2d");
  return result;
}

Tensor maxPool2dBackward(const Tensor& gradOutput, const Tensor& workspace, const Shape& inputShape,
                         const Pool2dParams& params) {
  const Shape outputShape = cpu::pooledShape("maxPool2d backward", inputShape, params);
  checkGradOutput("maxPool2d backward", gradOutput, outputShape);
  IMERGE_CHECK(
      workspace.defined() && workspace.dtype() == DType::Int32 && workspace.shape() == outputShape,
      "maxPool2d backward: no argmax workspace int32", shapeToString(outputShape),
      " for input float32", shapeToString(inputShape), "; run the forward with keepWorkspace");
  IMERGE_CHECK(&workspace.device() == &gradOutput.device(), "maxPool2d backward: workspace ",
               workspace.describe(), " is on ", workspace.device().name(),
               ", the gradient of the output on ", gradOutput.device().name());
  Tensor gradInput = Tensor::empty(inputShape, DType::Float32, gradOutput.device());
  const int64_t n = gradInput.numel();
  if (n == 0) return gradInput;
  maxPoolBackwardKernel<<<blocksFor(n), kThreadsPerBlock, 0, streamOf(gradOutput)>>>(
      gradInput.data<float>(), gradOutput.data<float>(), workspace.data<int32_t>(),
      pooling::stridedGeometry(inputShape, outputShape, params), inputShape[0] * inputShape[1]);
  checkLaunch("maxPool2d backward");
  return gradInput;
}

Tensor avgPool2dForward(const Tensor& input, const Pool2dParams& params, bool countIncludePad) {
  checkInput("avgPool2d", input);
  const Shape outputShape = cpu::pooledShape("avgPool2d", input.shape(), params);
  return averageForward(input, outputShape,
                        pooling::stridedGeometry(input.shape(), outputShape, params),
                        countIncludePad, false, "avgPool2d");
}

Tensor avgPool2dBackward(const Tensor& gradOutput, const Shape& inputShape,
                         const Pool2dParams& params, bool countIncludePad) {
  const Shape outputShape = cpu::pooledShape("avgPool2d backward", inputShape, params);
  checkGradOutput("avgPool2d backward", gradOutput, outputShape);
  return averageBackward(gradOutput, inputShape,
                         pooling::stridedGeometry(inputShape, outputShape, params), countIncludePad,
                         false, "avgPool2d backward");
}

Tensor adaptiveAvgPool2dForward(const Tensor& input, std::array<int64_t, 2> outputSize) {
  checkInput("adaptiveAvgPool2d", input);
  const Shape outputShape = cpu::adaptivePooledShape(input, outputSize);
  return averageForward(input, outputShape, pooling::adaptiveGeometry(input.shape(), outputShape),
                        false, true, "adaptiveAvgPool2d");
}

Tensor adaptiveAvgPool2dBackward(const Tensor& gradOutput, const Shape& inputShape) {
  cpu::checkAdaptivePoolGradOutput(gradOutput, inputShape);
  checkOnCuda("adaptiveAvgPool2d backward", "gradient of the output", gradOutput);
  return averageBackward(gradOutput, inputShape,
                         pooling::adaptiveGeometry(inputShape, gradOutput.shape()), false, true,
                         "adaptiveAvgPool2d backward");
}

}  // namespace imerge::cuda
