// Local response normalisation on a CUDA device: cuDNN's cross-channel LRN where its window and
// formula are PyTorch's, an own kernel (arithmetic in core/cuda/lrn_math.h) everywhere else.
//
// How cuDNN's LRN maps onto PyTorch's out = x * (k + alpha / size * sum x^2)^-beta:
//  - cudnnSetLRNDescriptor(lrnN, lrnAlpha, lrnBeta, lrnK): cuDNN divides lrnAlpha by lrnN
//    itself (its formula is k + alpha / n * sum, as Caffe's, whose cuDNN layer passes its alpha
//    unchanged; TensorFlow-style users, whose formula has no 1/n, pass alpha * n). So PyTorch's
//    size, alpha, beta and k go in unchanged.
//  - its window is [c - floor((n-1)/2), c + n - 1 - floor((n-1)/2)] (cudnn_ops.h): PyTorch's
//    [c - n/2, c + (n-1)/2] for odd n only; for even n it is mirrored.
//  - its limits: 1 <= n <= CUDNN_LRN_MAX_N (16), k >= CUDNN_LRN_MIN_K, beta >= CUDNN_LRN_MIN_BETA.
// Hence usesCudnn() below. cuDNN's backward takes the forward's output y (and x), so the
// workspace of that path is the output tensor itself (shared storage, no copy); the own
// kernel's workspace is the scale [N, C, H, W].
#include "core/cuda/cudnn_descriptors.h"
#include "core/cuda/flat_index.h"
#include "core/cuda/launch.h"
#include "core/cuda/lrn.h"
#include "core/cuda/lrn_math.h"

namespace imerge::cuda {

namespace {

using lrn::LrnCoefficients;

bool usesCudnn(const LrnParams& params) {
  return params.size % 2 == 1 && params.size <= CUDNN_LRN_MAX_N && params.k >= CUDNN_LRN_MIN_K &&
         params.beta >= CUDNN_LRN_MIN_BETA;
}

// The CPU's checks and words (core/cpu/lrn.h), then this device's.
void checkInput(const char* op, const Tensor& input, const LrnParams& params) {
  cpu::checkLrnInput(op, input, params);
  IMERGE_CHECK(input.device().type() == DeviceType::CUDA, op, ": input ", input.describe(),
               " is on ", input.device().name(), ", this kernel runs on a CUDA device");
}

// PyTorch's parameters unchanged: cuDNN divides alpha by n itself (see the top).
LrnDescriptor lrnDescriptor(const LrnParams& params) {
  LrnDescriptor descriptor;
  IMERGE_CUDA_CHECK(cudnnSetLRNDescriptor(descriptor.get(), static_cast<unsigned>(params.size),
                                          params.alpha, params.beta, params.k));
  return descriptor;
}

LrnCoefficients coefficientsOf(const LrnParams& params) {
  return lrn::coefficients(params.size, params.alpha, params.beta, params.k);
}

// input [N, C, P] -> output [N, C, P], and scale [N, C, P] unless null. One thread per element.
__global__ void lrnForwardKernel(float* output, float* scale, const float* input, int64_t batch,
                                 int64_t channels, int64_t planeSize, LrnCoefficients lrn) {
  const int64_t imageSize = channels * planeSize;
  const int64_t n = batch * imageSize;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    const auto [image, c, p] = positionOf(i, channels, planeSize);
    const float s = lrn::lrnScale(input + image * imageSize, channels, planeSize, c, p, lrn);
    output[i] = lrn::lrnOutput(input[i], s, lrn);
    if (scale != nullptr) scale[i] = s;
  }
}

// through [n] = gradOutput * input * scale^(-beta-1), elementwise.
__global__ void lrnThroughKernel(float* through, const float* gradOutput, const float* input,
                                 const float* scale, int64_t n, LrnCoefficients lrn) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    through[i] = lrn::lrnThrough(gradOutput[i], input[i], scale[i], lrn);
  }
}

// gradOutput, input, scale, through [N, C, P] -> gradInput [N, C, P]; gathers over the channels
// whose windows hold each element, so no atomics.
__global__ void lrnBackwardKernel(float* gradInput, const float* gradOutput, const float* input,
                                  const float* scale, const float* through, int64_t batch,
                                  int64_t channels, int64_t planeSize, LrnCoefficients lrn) {
  const int64_t imageSize = channels * planeSize;
  const int64_t n = batch * imageSize;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    const auto [image, j, p] = positionOf(i, channels, planeSize);
    const int64_t offset = image * imageSize;
    gradInput[i] = lrn::lrnGradInput(gradOutput + offset, input + offset, scale + offset,
                                     through + offset, channels, planeSize, j, p, lrn);
  }
}

}  // namespace

LrnResult lrnForward(const Tensor& input, const LrnParams& params, bool keepWorkspace) {
  checkInput("localResponseNorm", input, params);
  LrnResult result;
  result.output = Tensor::emptyLike(input);
  const int64_t n = input.numel();
  if (n == 0) {
    if (keepWorkspace) result.workspace = Tensor::emptyLike(input);
    return result;
  }
  cudaStream_t stream = streamOf(input);
  if (usesCudnn(params)) {
    const TensorDescriptor data = nchwTensorDescriptor(input.shape(), "localResponseNorm", "input");
    const LrnDescriptor lrn = lrnDescriptor(params);
    const float one = 1.0f, zero = 0.0f;
    IMERGE_CUDA_CHECK(cudnnLRNCrossChannelForward(
        cudaDeviceOf(input).cudnn(), lrn.get(), CUDNN_LRN_CROSS_CHANNEL_DIM1, &one, data.get(),
        input.data<float>(), &zero, data.get(), result.output.data<float>()));
    // cuDNN's backward reads the output; the caller must not change it in place meanwhile.
    if (keepWorkspace) result.workspace = result.output;
    return result;
  }
  Tensor scale;
  if (keepWorkspace) scale = Tensor::emptyLike(input);
  lrnForwardKernel<<<blocksFor(n), kThreadsPerBlock, 0, stream>>>(
      result.output.data<float>(), keepWorkspace ? scale.data<float>() : nullptr,
      input.data<float>(), input.dim(0), input.dim(1), input.dim(2) * input.dim(3),
      coefficientsOf(params));
  checkLaunch("localResponseNorm");
  result.workspace = scale;
  return result;
}

Tensor lrnBackward(const Tensor& gradOutput, const Tensor& input, const Tensor& workspace,
                   const LrnParams& params) {
  checkInput("localResponseNorm backward", input, params);
  IMERGE_CHECK(gradOutput.defined() && gradOutput.shape() == input.shape() &&
                   gradOutput.dtype() == DType::Float32 && &gradOutput.device() == &input.device(),
               "localResponseNorm backward: gradient of the output ",
               gradOutput.defined() ? gradOutput.describe() : std::string("(undefined)"),
               " does not match input ", input.describe(), " on ", input.device().name());
  IMERGE_CHECK(workspace.defined() && workspace.shape() == input.shape() &&
                   workspace.dtype() == DType::Float32 && &workspace.device() == &input.device(),
               "localResponseNorm backward: no workspace float32", shapeToString(input.shape()),
               " on ", input.device().name(), " for input ", input.describe(),
               "; run the forward with keepWorkspace");
  Tensor gradInput = Tensor::emptyLike(input);
  const int64_t n = input.numel();
  if (n == 0) return gradInput;
  cudaStream_t stream = streamOf(input);
  if (usesCudnn(params)) {
    const TensorDescriptor data = nchwTensorDescriptor(input.shape(), "localResponseNorm", "input");
    const LrnDescriptor lrn = lrnDescriptor(params);
    const float one = 1.0f, zero = 0.0f;
    // y is the forward's output, which is this path's workspace.
    IMERGE_CUDA_CHECK(cudnnLRNCrossChannelBackward(
        cudaDeviceOf(input).cudnn(), lrn.get(), CUDNN_LRN_CROSS_CHANNEL_DIM1, &one, data.get(),
        workspace.data<float>(), data.get(), gradOutput.data<float>(), data.get(),
        input.data<float>(), &zero, data.get(), gradInput.data<float>()));
    return gradInput;
  }
  const LrnCoefficients lrn = coefficientsOf(params);
  Tensor through = Tensor::emptyLike(input);  // [N, C, H, W]
  lrnThroughKernel<<<blocksFor(n), kThreadsPerBlock, 0, stream>>>(
      through.data<float>(), gradOutput.data<float>(), input.data<float>(), workspace.data<float>(),
      n, lrn);
  checkLaunch("localResponseNorm backward");
  lrnBackwardKernel<<<blocksFor(n), kThreadsPerBlock, 0, stream>>>(
      gradInput.data<float>(), gradOutput.data<float>(), input.data<float>(),
      workspace.data<float>(), through.data<float>(), input.dim(0), input.dim(1),
      input.dim(2) * input.dim(3), lrn);
  checkLaunch("localResponseNorm backward");
  return gradInput;
}

}  // namespace imerge::cuda
