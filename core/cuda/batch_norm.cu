// Batch normalisation on CUDA (contract: core/cuda/batch_norm.h): cuDNN's spatial mode for the
// training forward, the inference forward and the training backward; two own kernels for the
// running statistics and for the backward with constant statistics. Their arithmetic lives in
// batch_norm_math.h, which the CPU tests run too.
//
// Running statistics: cuDNN could update them itself (exponentialAverageFactor = momentum), but
// its documentation says only that the running variance is "the moving average of
// variance[x]", not whether that variance is the biased one it normalises with or the unbiased
// one PyTorch tracks. Users observe the unbiased one (apache/mxnet#18751, #21111), and nothing
// says what it does for a single element per channel (n - 1 = 0). So cuDNN updates nothing
// (both pointers NULL, which it allows together) and a [C]-element kernel applies the CPU's
// rule exactly, from the savedMean and savedInvStd the training forward returns anyway: the
// biased variance is recovered as 1 / invStd^2 - eps (in double; see varianceFromInverseStd).
#include <cudnn.h>

#include "core/cuda/batch_norm.h"
#include "core/cuda/batch_norm_math.h"
#include "core/cuda/cudnn_descriptors.h"
#include "core/cuda/launch.h"

namespace imerge::cuda {

namespace {

namespace math = batch_norm_math;

// ---- operands: the CPU kernels' checks (core/cpu/batch_norm.h), plus "on one CUDA device" ----

struct Layout {
  int64_t batch;
  int64_t channels;
  int64_t plane;                                   // H * W
  int64_t count() const { return batch * plane; }  // elements per channel
};

Layout checkInput(const char* op, const Tensor& input) {
  cpu::checkBatchNormInput(op, input);
  IMERGE_CHECK(input.device().type() == DeviceType::CUDA, op, ": input ", input.describe(),
               " is on ", input.device().name(), ", not on a CUDA device");
  return {input.dim(0), input.dim(1), input.dim(2) * input.dim(3)};
}

void checkPerChannel(const char* op, const char* what, const Tensor& tensor, const Tensor& input,
                     bool optional) {
  cpu::checkBatchNormPerChannel(op, what, tensor, input, optional);
  if (!tensor.defined()) return;
  IMERGE_CHECK(&tensor.device() == &input.device(), op, ": ", what, " ", tensor.describe(),
               " is on ", tensor.device().name(), " but input ", input.describe(), " is on ",
               input.device().name(), "; every operand must be on one CUDA device");
}

void checkGradOutput(const char* op, const Tensor& gradOutput, const Tensor& input) {
  cpu::checkBatchNormGradOutput(op, gradOutput, input);
  IMERGE_CHECK(&gradOutput.device() == &input.device(), op, ": gradient of the output ",
               gradOutput.describe(), " is on ", gradOutput.device().name(), " but input ",
               input.describe(), " is on ", input.device().name());
}

void checkEps(const char* op, float eps) {
  // Written so that a NaN eps is refused too.
  IMERGE_CHECK(eps >= CUDNN_BN_MIN_EPSILON, op, ": eps = ", eps,
               " is below cuDNN's minimum CUDNN_BN_MIN_EPSILON = ", CUDNN_BN_MIN_EPSILON);
}

// gamma or beta as cuDNN needs it: a [C] tensor on the device, `value` everywhere when the
// caller has none.
Tensor perChannelOr(const Tensor& tensor, int64_t channels, float value, Device& device) {
  return tensor.defined() ? tensor : Tensor::full({channels}, value, device);
}

// The descriptors every cuDNN call here takes: the data [N, C, H, W] and the per-channel
// [1, C, 1, 1] shared by scale, bias, mean and variance.
struct Descriptors {
  TensorDescriptor data;
  TensorDescriptor perChannel;
};
Descriptors descriptorsFor(const char* op, const Tensor& input) {
  return {nchwTensorDescriptor(input.shape(), op, "input"),
          channelTensorDescriptor(input.dim(1), op, "per-channel parameters of")};
}

// ---- own kernels ------------------------------------------------------------------------------

// runningMean, runningVar, savedMean, savedInvStd: [C]. One thread per channel.
__global__ void updateRunningStatisticsKernel(float* runningMean, float* runningVar,
                                              const float* savedMean, const float* savedInvStd,
                                              float eps, float momentum, int64_t count,
                                              int64_t channels) {
  for (int64_t c = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; c < channels;
       c += int64_t{blockDim.x} * gridDim.x) {
    math::updateRunningStatisticsAt(c, runningMean, runningVar, savedMean, savedInvStd, eps,
                                    momentum, count);
  }
}

// The backward with constant statistics. One block per channel (blockDim.x = kThreadsPerBlock,
// a power of two): each thread writes gradInput for its share of the channel's N * H * W
// elements and sums its share; a shared-memory tree adds the threads' sums, in the same order
// every run (no atomics, so the result is deterministic).
// gradOutput, input, gradInput [N, C, H, W]; weight (nullptr: gamma = 1), mean, variance,
// gradWeight, gradBias [C].
__global__ void inferenceBackwardKernel(const float* gradOutput, const float* input,
                                        float* gradInput, const float* weight, const float* mean,
                                        const float* variance, float eps, int64_t channels,
                                        int64_t plane, int64_t count, float* gradWeight,
                                        float* gradBias) {
  __shared__ double sumGradOutput[kThreadsPerBlock];
  __shared__ double sumGradOutputCentred[kThreadsPerBlock];
  const int64_t c = blockIdx.x;
  const float invStd = math::inverseStd(variance[c], eps);
  const float gamma = weight ? weight[c] : 1.0f;
  const math::ChannelSums share =
      math::inferenceBackwardShare(gradOutput, input, gradInput, c, channels, plane, count,
                                   threadIdx.x, blockDim.x, mean[c], gamma * invStd);
  sumGradOutput[threadIdx.x] = share.gradOutput;
  sumGradOutputCentred[threadIdx.x] = share.gradOutputCentred;
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) {
      sumGradOutput[threadIdx.x] += sumGradOutput[threadIdx.x + stride];
      sumGradOutputCentred[threadIdx.x] += sumGradOutputCentred[threadIdx.x + stride];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    math::ChannelSums total;
    total.gradOutput = sumGradOutput[0];
    total.gradOutputCentred = sumGradOutputCentred[0];
    math::parameterGradientsAt(c, total, invStd, gradWeight, gradBias);
  }
}

}  // namespace

BatchNormTrainingResult batchNormTrainingForward(const Tensor& input, const Tensor& weight,
                                                 const Tensor& bias, Tensor& runningMean,
                                                 Tensor& runningVar, float momentum, float eps) {
  const char* op = "batchNorm2d";
  const Layout layout = checkInput(op, input);
  checkPerChannel(op, "weight", weight, input, true);
  checkPerChannel(op, "bias", bias, input, true);
  IMERGE_CHECK(runningMean.defined() == runningVar.defined(), op, ": running mean ",
               runningMean.defined() ? runningMean.describe() : std::string("(undefined)"),
               " and running variance ",
               runningVar.defined() ? runningVar.describe() : std::string("(undefined)"),
               " must be both defined or both undefined");
  checkPerChannel(op, "running mean", runningMean, input, true);
  checkPerChannel(op, "running variance", runningVar, input, true);
  IMERGE_CHECK(layout.count() > 0, op, ": input ", input.describe(), " has no elements");
  checkEps(op, eps);

  CudaDevice& device = cudaDeviceOf(input);
  device.makeCurrent();
  const Descriptors descriptors = descriptorsFor(op, input);
  const Tensor scale = perChannelOr(weight, layout.channels, 1.0f, device);  // [C]
  const Tensor shift = perChannelOr(bias, layout.channels, 0.0f, device);    // [C]
  BatchNormTrainingResult result{Tensor::emptyLike(input),                   // [N, C, H, W]
                                 Tensor::empty({layout.channels}, DType::Float32, device),   // [C]
                                 Tensor::empty({layout.channels}, DType::Float32, device)};  // [C]
  const float one = 1.0f, zero = 0.0f;
  IMERGE_CUDA_CHECK(cudnnBatchNormalizationForwardTraining(
      device.cudnn(), CUDNN_BATCHNORM_SPATIAL, &one, &zero, descriptors.data.get(), input.rawData(),
      descriptors.data.get(), result.output.rawData(), descriptors.perChannel.get(),
      scale.rawData(), shift.rawData(),
      /*exponentialAverageFactor=*/0.0, /*resultRunningMean=*/nullptr,
      /*resultRunningVariance=*/nullptr, eps, result.savedMean.rawData(),
      result.savedInvStd.rawData()));

  if (runningMean.defined()) {
    updateRunningStatisticsKernel<<<blocksFor(layout.channels), kThreadsPerBlock, 0,
                                    device.stream()>>>(
        runningMean.data<float>(), runningVar.data<float>(), result.savedMean.data<float>(),
        result.savedInvStd.data<float>(), eps, momentum, layout.count(), layout.channels);
    checkLaunch("batchNorm2d running statistics");
  }
  return result;
}

Tensor batchNormInferenceForward(const Tensor& input, const Tensor& weight, const Tensor& bias,
                                 const Tensor& mean, const Tensor& variance, float eps) {
  const char* op = "batchNorm2d";
  const Layout layout = checkInput(op, input);
  checkPerChannel(op, "weight", weight, input, true);
  checkPerChannel(op, "bias", bias, input, true);
  checkPerChannel(op, "running mean", mean, input, false);
  checkPerChannel(op, "running variance", variance, input, false);
  checkEps(op, eps);
  Tensor output = Tensor::emptyLike(input);  // [N, C, H, W]
  if (layout.count() == 0) return output;    // nothing to normalise (cuDNN refuses a 0 size)

  CudaDevice& device = cudaDeviceOf(input);
  device.makeCurrent();
  const Descriptors descriptors = descriptorsFor(op, input);
  const Tensor scale = perChannelOr(weight, layout.channels, 1.0f, device);  // [C]
  const Tensor shift = perChannelOr(bias, layout.channels, 0.0f, device);    // [C]
  const float one = 1.0f, zero = 0.0f;
  IMERGE_CUDA_CHECK(cudnnBatchNormalizationForwardInference(
      device.cudnn(), CUDNN_BATCHNORM_SPATIAL, &one, &zero, descriptors.data.get(), input.rawData(),
      descriptors.data.get(), output.rawData(), descriptors.perChannel.get(), scale.rawData(),
      shift.rawData(), mean.rawData(), variance.rawData(), eps));
  return output;
}

BatchNormGradients batchNormTrainingBackward(const Tensor& gradOutput, const Tensor& input,
                                             const Tensor& weight, const Tensor& savedMean,
                                             const Tensor& savedInvStd, float eps) {
  const char* op = "batchNorm2d backward";
  const Layout layout = checkInput(op, input);
  checkGradOutput(op, gradOutput, input);
  checkPerChannel(op, "weight", weight, input, true);
  checkPerChannel(op, "saved mean", savedMean, input, false);
  checkPerChannel(op, "saved inverse standard deviation", savedInvStd, input, false);
  IMERGE_CHECK(layout.count() > 0, op, ": input ", input.describe(), " has no elements");
  checkEps(op, eps);

  CudaDevice& device = cudaDeviceOf(input);
  device.makeCurrent();
  const Descriptors descriptors = descriptorsFor(op, input);
  const Tensor scale = perChannelOr(weight, layout.channels, 1.0f, device);  // [C]
  BatchNormGradients gradients{Tensor::emptyLike(input),                     // [N, C, H, W]
                               Tensor::empty({layout.channels}, DType::Float32, device),   // [C]
                               Tensor::empty({layout.channels}, DType::Float32, device)};  // [C]
  const float one = 1.0f, zero = 0.0f;
  // alpha/beta pairs for the data gradient and for the parameter gradients: overwrite both.
  IMERGE_CUDA_CHECK(cudnnBatchNormalizationBackward(
      device.cudnn(), CUDNN_BATCHNORM_SPATIAL, &one, &zero, &one, &zero, descriptors.data.get(),
      input.rawData(), descriptors.data.get(), gradOutput.rawData(), descriptors.data.get(),
      gradients.input.rawData(), descriptors.perChannel.get(), scale.rawData(),
      gradients.weight.rawData(), gradients.bias.rawData(), eps, savedMean.rawData(),
      savedInvStd.rawData()));
  return gradients;
}

BatchNormGradients batchNormInferenceBackward(const Tensor& gradOutput, const Tensor& input,
                                              const Tensor& weight, const Tensor& mean,
                                              const Tensor& variance, float eps) {
  const char* op = "batchNorm2d backward";
  const Layout layout = checkInput(op, input);
  checkGradOutput(op, gradOutput, input);
  checkPerChannel(op, "weight", weight, input, true);
  checkPerChannel(op, "mean", mean, input, false);
  checkPerChannel(op, "variance", variance, input, false);
  checkEps(op, eps);

  CudaDevice& device = cudaDeviceOf(input);
  device.makeCurrent();
  BatchNormGradients gradients{Tensor::emptyLike(input),  // [N, C, H, W]
                               Tensor::empty({layout.channels}, DType::Float32, device),   // [C]
                               Tensor::empty({layout.channels}, DType::Float32, device)};  // [C]
  if (layout.channels == 0) return gradients;
  // A channel without elements still gets its (zero) parameter gradients from the kernel.
  inferenceBackwardKernel<<<static_cast<unsigned>(layout.channels), kThreadsPerBlock, 0,
                            device.stream()>>>(
      gradOutput.data<float>(), input.data<float>(), gradients.input.data<float>(),
      weight.defined() ? weight.data<float>() : nullptr, mean.data<float>(), variance.data<float>(),
      eps, layout.channels, layout.plane, layout.count(), gradients.weight.data<float>(),
      gradients.bias.data<float>());
  checkLaunch("batchNorm2d inference backward");
  return gradients;
}

}  // namespace imerge::cuda
