// conv2d on CUDA through cuDNN's legacy convolution API (contract: core/cuda/convolution.h).
//
// A ConvPlan per key (device, shapes, params, bias presence and the settings that change the
// choice) holds the descriptors and, filled in lazily per direction (forward, backward data,
// backward filter), the algorithm cuDNN's search found fastest, the convolution descriptor with
// the math type it was timed with, and its workspace size. A direction is searched the first
// time it is needed, on that call's real operands (read only) with scratch outputs; plans are
// never evicted, so the descriptors' raw handles stay valid for calls that run outside the
// cache's mutex.
//
// Math type (cudnnSetConvolutionMathType), float32 data:
//  - allowTf32: CUDNN_DEFAULT_MATH, as PyTorch with allow_tf32. On Ampere and later (Hopper's
//    sm_90 included) it permits TF32 tensor-core kernels for float32 data while still letting
//    the search time the FMA kernels, so the fastest of both wins. Each direction's descriptor
//    then gets the math type its chosen result reports: cuDNN 7.4+ needs algorithm and math
//    type together to run the kernel it timed. Not CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION,
//    which may down-convert float32 to FP16.
//  - strict: CUDNN_FMA_MATH, "kernels that use FMA instructions" only, so no TF32 on any GPU;
//    results reporting another math type are refused as well (PyTorch asserts there are none).
#include <cudnn.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <tuple>
#include <vector>

#include "core/cuda/convolution.h"
#include "core/cuda/cuda_check.h"
#include "core/cuda/cuda_device.h"
#include "core/cuda/cudnn_descriptors.h"
#include "core/gpu_policy/conv_algorithm_choice.h"
#include "core/gpu_policy/cuda_settings.h"

namespace imerge::cuda {

namespace {

// ---- operands -------------------------------------------------------------------------------

void checkOnDeviceOf(const char* op, const Tensor& anchor, const char* name, const Tensor& tensor) {
  IMERGE_CHECK(tensor.device().type() == DeviceType::CUDA, op, ": ", name, " ", tensor.describe(),
               " is on ", tensor.device().name(), "; every operand must be on one CUDA device");
  IMERGE_CHECK(&tensor.device() == &anchor.device(), op, ": ", name, " ", tensor.describe(),
               " is on ", tensor.device().name(), " but input ", anchor.describe(), " is on ",
               anchor.device().name(), "; every operand must be on one CUDA device");
}

// A workspace of at least `bytes` from the device's caching allocator; undefined for 0. It is
// released once the call that uses it is queued: the allocator reuses blocks in stream order.
Tensor workspaceTensor(CudaDevice& device, size_t bytes) {
  if (bytes == 0) return Tensor();
  const int64_t floats = static_cast<int64_t>((bytes + sizeof(float) - 1) / sizeof(float));
  return Tensor::empty({floats}, DType::Float32, device);
}
void* dataOrNull(const Tensor& tensor) {
  return tensor.defined() ? tensor.rawData() : nullptr;
}

// ---- the plan cache -------------------------------------------------------------------------

struct ConvKey {
  int device;
  Shape input;
  Shape weight;
  std::array<int64_t, 7> params;  // stride, padding, dilation (H then W), groups
  bool bias;
  bool allowTf32;
  bool deterministic;
  size_t workspaceLimitBytes;

  auto tied() const {
    return std::tie(device, input, weight, params, bias, allowTf32, deterministic,
                    workspaceLimitBytes);
  }
  bool operator<(const ConvKey& other) const { return tied() < other.tied(); }
};

// One direction's choice.
struct Choice {
  ConvolutionDescriptor convolution;  // math type set to the one the algorithm was timed with
  int algorithm = 0;
  size_t workspaceBytes = 0;
};

struct ConvPlan {
  TensorDescriptor input;   // [N, C_in, H, W], also the data gradient's
  TensorDescriptor output;  // [N, C_out, H_out, W_out], also gradOutput's
  TensorDescriptor bias;    // [1, C_out, 1, 1]
  FilterDescriptor weight;  // [C_out, C_in / groups, kH, kW], also the weight gradient's
  std::optional<Choice> forward;
  std::optional<Choice> backwardData;
  std::optional<Choice> backwardFilter;
};

// What a call needs to run one direction; raw handles owned by a plan that is never destroyed.
struct Execution {
  cudnnTensorDescriptor_t input;
  cudnnTensorDescriptor_t output;
  cudnnTensorDescriptor_t bias;
  cudnnFilterDescriptor_t weight;
  cudnnConvolutionDescriptor_t convolution;
  int algorithm;
  size_t workspaceBytes;
};

struct PlanCache {
  std::mutex mutex;
  std::map<ConvKey, std::unique_ptr<ConvPlan>> plans;
};
PlanCache& planCache() {
  static auto* cache = new PlanCache();  // never destroyed: plans may be used at exit
  return *cache;
}
std::atomic<size_t> searchCount{0};

// cuDNN's convolution descriptor has one padding per axis, applied on both sides: asymmetric
// padding (Conv2dParams::paddingEnd) is refused rather than computed with the wrong geometry.
void checkSymmetricPadding(const char* op, const Conv2dParams& params) {
  IMERGE_CHECK(params.symmetric(), op, ": padding [", params.padding[0], ", ", params.padding[1],
               "] before and [", params.end()[0], ", ", params.end()[1],
               "] after the input is not implemented on CUDA (cuDNN pads symmetrically); run it "
               "on the CPU, or pad the input and use symmetric padding");
}

// Everything that identifies one convolution problem; what the search and errors describe.
struct Problem {
  CudaDevice& device;
  const Shape& inputShape;
  const Shape& weightShape;
  const Shape& outputShape;
  const Conv2dParams& params;
  bool bias;
  CudaSettings settings;

  ConvKey key() const {
    return {device.index(),
            inputShape,
            weightShape,
            {params.stride[0], params.stride[1], params.padding[0], params.padding[1],
             params.dilation[0], params.dilation[1], params.groups},
            bias,
            settings.allowTf32,
            settings.deterministic,
            settings.convWorkspaceLimitBytes};
  }
  std::string describe() const {
    return detail::concat(
        "input ", shapeToString(inputShape), ", weight ", shapeToString(weightShape), ", stride [",
        params.stride[0], ", ", params.stride[1], "], padding [", params.padding[0], ", ",
        params.padding[1], "], dilation [", params.dilation[0], ", ", params.dilation[1],
        "], groups ", params.groups, " on ", device.name(), " (allowTf32 ", settings.allowTf32,
        ", deterministic ", settings.deterministic, ", workspace limit ",
        settings.convWorkspaceLimitBytes, " bytes)");
  }
};

// The caller holds the cache's mutex.
ConvPlan& planLocked(const Problem& problem) {
  auto& slot = planCache().plans[problem.key()];
  if (!slot) {
    // Assigned only once every descriptor is set: a failure leaves an empty slot, retried later.
    slot = std::make_unique<ConvPlan>(
        ConvPlan{nchwTensorDescriptor(problem.inputShape, "conv2d", "input"),
                 nchwTensorDescriptor(problem.outputShape, "conv2d", "output"),
                 channelTensorDescriptor(problem.weightShape[0], "conv2d", "bias"),
                 oihwFilterDescriptor(problem.weightShape, "conv2d", "weight"), std::nullopt,
                 std::nullopt, std::nullopt});
  }
  return *slot;
}

ConvolutionDescriptor convolutionDescriptor(const Problem& problem) {
  const Conv2dParams& p = problem.params;
  const Shape& w = problem.weightShape;
  ConvolutionDescriptor descriptor;
  IMERGE_CUDA_CHECK(cudnnSetConvolution2dDescriptor(
      descriptor.get(), cudnnSize(p.padding[0], "conv2d", "weight", w),
      cudnnSize(p.padding[1], "conv2d", "weight", w), cudnnSize(p.stride[0], "conv2d", "weight", w),
      cudnnSize(p.stride[1], "conv2d", "weight", w),
      cudnnSize(p.dilation[0], "conv2d", "weight", w),
      cudnnSize(p.dilation[1], "conv2d", "weight", w),
      CUDNN_CROSS_CORRELATION,  // PyTorch's "convolution" does not flip the kernel
      CUDNN_DATA_FLOAT));
  IMERGE_CUDA_CHECK(
      cudnnSetConvolutionGroupCount(descriptor.get(), cudnnSize(p.groups, "conv2d", "weight", w)));
  IMERGE_CUDA_CHECK(cudnnSetConvolutionMathType(
      descriptor.get(), problem.settings.allowTf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH));
  return descriptor;
}

template <typename Perf>
AlgorithmTrial trialOf(const Perf& perf) {
  AlgorithmTrial trial;
  trial.algorithm = static_cast<int>(perf.algo);
  trial.succeeded = perf.status == CUDNN_STATUS_SUCCESS;
  trial.milliseconds = perf.time;
  trial.workspaceBytes = perf.memory;
  trial.deterministic = perf.determinism == CUDNN_DETERMINISTIC;
  trial.fmaMath = perf.mathType == CUDNN_FMA_MATH;
  return trial;
}

// One direction's search. `workspaceSize(convolution, algorithm, &bytes)` asks cuDNN what an
// algorithm needs; `find(convolution, workspace, bytes, perf, &count)` runs
// cudnnFind*AlgorithmEx. Both close over the plan's other descriptors and the operands. The
// caller holds the cache's mutex, so one key is never searched twice at once.
template <typename Perf, int kAlgorithms, typename WorkspaceSize, typename Find>
Choice search(const Problem& problem, const char* direction, WorkspaceSize workspaceSize,
              Find find) {
  Choice choice{convolutionDescriptor(problem)};
  size_t largestAsk = 0;
  for (int algorithm = 0; algorithm < kAlgorithms; ++algorithm) {
    size_t bytes = 0;
    // Algorithms this problem does not support answer with an error status: skip them.
    if (workspaceSize(choice.convolution.get(), algorithm, &bytes) == CUDNN_STATUS_SUCCESS) {
      largestAsk = std::max(largestAsk, bytes);
    }
  }

  std::array<Perf, kAlgorithms> perf{};
  int count = 0;
  size_t searchBytes =
      firstSearchWorkspaceBytes(problem.settings.convWorkspaceLimitBytes, largestAsk);
  for (;;) {
    Tensor workspace;
    try {
      workspace = workspaceTensor(problem.device, searchBytes);
    } catch (const OutOfMemoryError&) {
      searchBytes = nextSearchWorkspaceBytes(searchBytes);  // reaches 0, which allocates nothing
      continue;
    }
    const cudnnStatus_t status =
        find(choice.convolution.get(), dataOrNull(workspace), searchBytes, perf.data(), &count);
    if (status == CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED && searchBytes > 0) {
      // cuDNN's own device allocations did not fit beside our workspace: give memory back and
      // retry with less. (cuDNN 9 spells this status so; CUDNN_STATUS_ALLOC_FAILED now means a
      // host allocation, which a smaller workspace would not help.)
      workspace = Tensor();
      problem.device.synchronize();  // no queued work may still use a block about to be freed
      problem.device.releaseCachedMemory();
      searchBytes = nextSearchWorkspaceBytes(searchBytes);
      continue;
    }
    IMERGE_CHECK(status == CUDNN_STATUS_SUCCESS, "conv2d ", direction,
                 ": cuDNN's algorithm search failed (", cudnnGetErrorString(status), ") for ",
                 problem.describe());
    break;
  }
  searchCount.fetch_add(1);

  std::vector<AlgorithmTrial> trials;
  for (int i = 0; i < std::min(count, kAlgorithms); ++i) trials.push_back(trialOf(perf[i]));
  AlgorithmRequirements requirements;
  requirements.workspaceLimitBytes =
      std::min(problem.settings.convWorkspaceLimitBytes, searchBytes);
  requirements.deterministic = problem.settings.deterministic;
  requirements.fmaMathOnly = !problem.settings.allowTf32;
  const std::optional<size_t> chosen = chooseAlgorithm(trials, requirements);
  IMERGE_CHECK(chosen.has_value(), "conv2d ", direction,
               ": no cuDNN algorithm succeeded within a workspace of ",
               requirements.workspaceLimitBytes, " bytes",
               requirements.deterministic ? ", deterministic" : "",
               requirements.fmaMathOnly ? ", in plain float32 (no TF32)" : "", " for ",
               problem.describe(), ". Tried: ", describeTrials(trials),
               ". Raise the workspace limit, or relax CudaSettings::deterministic / allowTf32 "
               "(imerge-train's --deterministic / --no-tf32)");

  const Perf& best = perf[*chosen];
  if (problem.settings.allowTf32) {
    IMERGE_CUDA_CHECK(cudnnSetConvolutionMathType(choice.convolution.get(), best.mathType));
  }
  choice.algorithm = static_cast<int>(best.algo);
  choice.workspaceBytes = best.memory;
  return choice;
}

Execution executionOf(const ConvPlan& plan, const Choice& choice) {
  return {plan.input.get(),         plan.output.get(), plan.bias.get(),      plan.weight.get(),
          choice.convolution.get(), choice.algorithm,  choice.workspaceBytes};
}

Execution forwardExecution(const Problem& problem, const Tensor& input, const Tensor& weight) {
  std::lock_guard<std::mutex> lock(planCache().mutex);
  ConvPlan& plan = planLocked(problem);
  if (!plan.forward) {
    cudnnHandle_t handle = problem.device.cudnn();
    // The search writes every algorithm's result: into scratch, never into a caller's tensor.
    Tensor scratch = Tensor::empty(problem.outputShape, DType::Float32, problem.device);
    plan.forward = search<cudnnConvolutionFwdAlgoPerf_t, CUDNN_CONVOLUTION_FWD_ALGO_COUNT>(
        problem, "forward",
        [&](cudnnConvolutionDescriptor_t convolution, int algorithm, size_t* bytes) {
          return cudnnGetConvolutionForwardWorkspaceSize(
              handle, plan.input.get(), plan.weight.get(), convolution, plan.output.get(),
              static_cast<cudnnConvolutionFwdAlgo_t>(algorithm), bytes);
        },
        [&](cudnnConvolutionDescriptor_t convolution, void* workspace, size_t bytes,
            cudnnConvolutionFwdAlgoPerf_t* perf, int* count) {
          return cudnnFindConvolutionForwardAlgorithmEx(
              handle, plan.input.get(), input.rawData(), plan.weight.get(), weight.rawData(),
              convolution, plan.output.get(), scratch.rawData(), CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
              count, perf, workspace, bytes);
        });
  }
  return executionOf(plan, *plan.forward);
}

Execution backwardDataExecution(const Problem& problem, const Tensor& weight,
                                const Tensor& gradOutput) {
  std::lock_guard<std::mutex> lock(planCache().mutex);
  ConvPlan& plan = planLocked(problem);
  if (!plan.backwardData) {
    cudnnHandle_t handle = problem.device.cudnn();
    Tensor scratch = Tensor::empty(problem.inputShape, DType::Float32, problem.device);
    plan.backwardData =
        search<cudnnConvolutionBwdDataAlgoPerf_t, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT>(
            problem, "backward data",
            [&](cudnnConvolutionDescriptor_t convolution, int algorithm, size_t* bytes) {
              return cudnnGetConvolutionBackwardDataWorkspaceSize(
                  handle, plan.weight.get(), plan.output.get(), convolution, plan.input.get(),
                  static_cast<cudnnConvolutionBwdDataAlgo_t>(algorithm), bytes);
            },
            [&](cudnnConvolutionDescriptor_t convolution, void* workspace, size_t bytes,
                cudnnConvolutionBwdDataAlgoPerf_t* perf, int* count) {
              return cudnnFindConvolutionBackwardDataAlgorithmEx(
                  handle, plan.weight.get(), weight.rawData(), plan.output.get(),
                  gradOutput.rawData(), convolution, plan.input.get(), scratch.rawData(),
                  CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, count, perf, workspace, bytes);
            });
  }
  return executionOf(plan, *plan.backwardData);
}

Execution backwardFilterExecution(const Problem& problem, const Tensor& input,
                                  const Tensor& gradOutput) {
  std::lock_guard<std::mutex> lock(planCache().mutex);
  ConvPlan& plan = planLocked(problem);
  if (!plan.backwardFilter) {
    cudnnHandle_t handle = problem.device.cudnn();
    Tensor scratch = Tensor::empty(problem.weightShape, DType::Float32, problem.device);
    plan.backwardFilter =
        search<cudnnConvolutionBwdFilterAlgoPerf_t, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT>(
            problem, "backward filter",
            [&](cudnnConvolutionDescriptor_t convolution, int algorithm, size_t* bytes) {
              return cudnnGetConvolutionBackwardFilterWorkspaceSize(
                  handle, plan.input.get(), plan.output.get(), convolution, plan.weight.get(),
                  static_cast<cudnnConvolutionBwdFilterAlgo_t>(algorithm), bytes);
            },
            [&](cudnnConvolutionDescriptor_t convolution, void* workspace, size_t bytes,
                cudnnConvolutionBwdFilterAlgoPerf_t* perf, int* count) {
              return cudnnFindConvolutionBackwardFilterAlgorithmEx(
                  handle, plan.input.get(), input.rawData(), plan.output.get(),
                  gradOutput.rawData(), convolution, plan.weight.get(), scratch.rawData(),
                  CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, count, perf, workspace, bytes);
            });
  }
  return executionOf(plan, *plan.backwardFilter);
}

// The bias gradient needs only the plan's descriptors, no search.
Execution descriptorsOnly(const Problem& problem) {
  std::lock_guard<std::mutex> lock(planCache().mutex);
  const ConvPlan& plan = planLocked(problem);
  return {plan.input.get(), plan.output.get(), plan.bias.get(), plan.weight.get(), nullptr, 0, 0};
}

}  // namespace

Tensor conv2dForward(const Tensor& input, const Tensor& weight, const Tensor& bias,
                     const Conv2dParams& params) {
  checkSymmetricPadding("conv2d", params);
  const Shape outputShape = cpu::conv2dOutputShape(input, weight, bias, params);
  checkOnDeviceOf("conv2d", input, "input", input);
  checkOnDeviceOf("conv2d", input, "weight", weight);
  if (bias.defined()) checkOnDeviceOf("conv2d", input, "bias", bias);
  CudaDevice& device = cudaDeviceOf(input);
  device.makeCurrent();
  const Problem problem{device, input.shape(),  weight.shape(), outputShape,
                        params, bias.defined(), cudaSettings()};

  Tensor output = Tensor::empty(outputShape, DType::Float32, device);  // [N, C_out, H_out, W_out]
  const Execution run = forwardExecution(problem, input, weight);
  const Tensor workspace = workspaceTensor(device, run.workspaceBytes);
  const float one = 1.0f, zero = 0.0f;
  IMERGE_CUDA_CHECK(cudnnConvolutionForward(
      device.cudnn(), &one, run.input, input.rawData(), run.weight, weight.rawData(),
      run.convolution, static_cast<cudnnConvolutionFwdAlgo_t>(run.algorithm), dataOrNull(workspace),
      run.workspaceBytes, &zero, run.output, output.rawData()));
  if (bias.defined()) {
    // output += bias [1, C_out, 1, 1], broadcast over N, H and W.
    IMERGE_CUDA_CHECK(cudnnAddTensor(device.cudnn(), &one, run.bias, bias.rawData(), &one,
                                     run.output, output.rawData()));
  }
  return output;
}

Conv2dGrads conv2dBackward(const Tensor& input, const Tensor& weight, const Tensor& gradOutput,
                           const Conv2dParams& params, bool needInput, bool needWeight,
                           bool needBias) {
  checkSymmetricPadding("conv2d backward", params);
  const Shape outputShape = cpu::conv2dOutputShape(input, weight, Tensor(), params);
  IMERGE_CHECK(gradOutput.dtype() == DType::Float32 && gradOutput.shape() == outputShape,
               "conv2d backward: gradOutput ", gradOutput.describe(), " must be float32",
               shapeToString(outputShape), " for input ", input.describe(), " and weight ",
               weight.describe());
  checkOnDeviceOf("conv2d backward", input, "input", input);
  checkOnDeviceOf("conv2d backward", input, "weight", weight);
  checkOnDeviceOf("conv2d backward", input, "gradOutput", gradOutput);
  Conv2dGrads grads;
  if (!needInput && !needWeight && !needBias) return grads;
  CudaDevice& device = cudaDeviceOf(input);
  device.makeCurrent();
  // Bias presence in the key is needBias: a layer with a bias asks for its gradient.
  const Problem problem{device, input.shape(), weight.shape(), outputShape,
                        params, needBias,      cudaSettings()};
  const float one = 1.0f, zero = 0.0f;

  if (needInput) {
    grads.input = Tensor::empty(input.shape(), DType::Float32, device);  // [N, C_in, H, W]
    const Execution run = backwardDataExecution(problem, weight, gradOutput);
    const Tensor workspace = workspaceTensor(device, run.workspaceBytes);
    IMERGE_CUDA_CHECK(cudnnConvolutionBackwardData(
        device.cudnn(), &one, run.weight, weight.rawData(), run.output, gradOutput.rawData(),
        run.convolution, static_cast<cudnnConvolutionBwdDataAlgo_t>(run.algorithm),
        dataOrNull(workspace), run.workspaceBytes, &zero, run.input, grads.input.rawData()));
  }
  if (needWeight) {
    // [C_out, C_in / groups, kH, kW]
    grads.weight = Tensor::empty(weight.shape(), DType::Float32, device);
    const Execution run = backwardFilterExecution(problem, input, gradOutput);
    const Tensor workspace = workspaceTensor(device, run.workspaceBytes);
    IMERGE_CUDA_CHECK(cudnnConvolutionBackwardFilter(
        device.cudnn(), &one, run.input, input.rawData(), run.output, gradOutput.rawData(),
        run.convolution, static_cast<cudnnConvolutionBwdFilterAlgo_t>(run.algorithm),
        dataOrNull(workspace), run.workspaceBytes, &zero, run.weight, grads.weight.rawData()));
  }
  if (needBias) {
    grads.bias = Tensor::empty({weight.dim(0)}, DType::Float32, device);  // [C_out]
    const Execution run = descriptorsOnly(problem);
    // gradOutput summed over N, H and W per output channel.
    IMERGE_CUDA_CHECK(cudnnConvolutionBackwardBias(device.cudnn(), &one, run.output,
                                                   gradOutput.rawData(), &zero, run.bias,
                                                   grads.bias.rawData()));
  }
  return grads;
}

size_t convAlgorithmSearches() {
  return searchCount.load();
}

}  // namespace imerge::cuda
