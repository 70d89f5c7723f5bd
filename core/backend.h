// The kernels of one kind of device, as the autograd ops and the optimizer call them, and
// backendFor, the one place that decides which device's kernels an op runs: those of the device
// its inputs live on (Device::backend()).
//
//   return backendFor("relu", x).reluForward(x);
//
// Each backend (core/cpu/cpu_backend.cpp, core/cuda/cuda_backend.cpp) forwards to its device's
// kernels, whose headers state the contracts in full; the shared parameter and result types are
// in core/kernel_params.h. A backend is a process-wide object that is never destroyed, so a
// backward closure may keep a reference to the one its forward used. Every kernel checks its
// operands and names the op in its messages; backendFor checks only that they share a device.
#pragma once

#include <array>
#include <cstdint>

#include "core/kernel_params.h"
#include "core/random.h"
#include "core/tensor.h"

namespace imerge {

class Backend {
 public:
  virtual ~Backend() = default;

  // ---- elementwise and reductions (shapes match exactly; broadcasting is below) -------------
  virtual Tensor add(const Tensor& a, const Tensor& b) const = 0;
  virtual Tensor sub(const Tensor& a, const Tensor& b) const = 0;
  virtual Tensor mul(const Tensor& a, const Tensor& b) const = 0;
  virtual Tensor scale(const Tensor& a, float factor) const = 0;
  virtual Tensor reluForward(const Tensor& input) const = 0;
  // gradInput = gradOutput where output > 0, else 0
  virtual Tensor reluBackward(const Tensor& gradOutput, const Tensor& output) const = 0;
  // The sum of all elements, on the host (waits for the device).
  virtual float sumAll(const Tensor& input) const = 0;
  // destination += source (gradient accumulation)
  virtual void addInPlace(Tensor& destination, const Tensor& source) const = 0;
  // every element of a float32 tensor = value (Tensor::fill on a non-host device)
  virtual void fill(Tensor& destination, float value) const = 0;

  // ---- broadcasting (core/broadcast.h; core/cpu/broadcast.h) --------------------------------
  // float32 a, b whose shapes broadcast -> op(a, b) of the broadcast shape
  virtual Tensor broadcastBinary(BinaryOp op, const Tensor& a, const Tensor& b) const = 0;
  // float32 input of a shape that `shape` broadcasts to -> its sums over the dimensions that
  // broadcasting stretched, of `shape` (the backward of a broadcast)
  virtual Tensor sumToShape(const Tensor& input, const Shape& shape) const = 0;

  // ---- log-softmax over one dimension (core/cpu/log_softmax.h) ------------------------------
  // dim in [0, ndim); output = input - logsumexp(input, dim)
  virtual Tensor logSoftmaxForward(const Tensor& input, int64_t dim) const = 0;
  // gradInput = gradOutput - exp(output) * sum(gradOutput, dim)
  virtual Tensor logSoftmaxBackward(const Tensor& gradOutput, const Tensor& output,
                                    int64_t dim) const = 0;

  // ---- matrix products (2-D float32, row-major) ---------------------------------------------
  // a [M, K] (or [K, M] transposed), b [K, N] (or [N, K] transposed) -> [M, N]
  virtual Tensor gemm(const Tensor& a, const Tensor& b, Transpose transposeA,
                      Transpose transposeB) const = 0;
  // x [N, in], weight [out, in], bias [out] or undefined -> x weight^T + bias [N, out]
  virtual Tensor linearForward(const Tensor& x, const Tensor& weight, const Tensor& bias) const = 0;
  // matrix [rows, cols] -> sums over the rows [cols] (Linear's bias gradient)
  virtual Tensor sumRows(const Tensor& matrix) const = 0;

  // ---- convolution (core/cpu/convolution.h) -------------------------------------------------
  // input [N, C_in, H, W], weight [C_out, C_in / groups, kH, kW], bias [C_out] or undefined
  virtual Tensor conv2dForward(const Tensor& input, const Tensor& weight, const Tensor& bias,
                               const Conv2dParams& params) const = 0;
  // Only the gradients asked for; the others are left undefined.
  virtual Conv2dGrads conv2dBackward(const Tensor& input, const Tensor& weight,
                                     const Tensor& gradOutput, const Conv2dParams& params,
                                     bool needInput, bool needWeight, bool needBias) const = 0;

  // ---- pooling (core/cpu/pooling.h) ---------------------------------------------------------
  // keepWorkspace: a backward will follow.
  virtual MaxPool2dResult maxPool2dForward(const Tensor& input, const Pool2dParams& params,
                                           bool keepWorkspace) const = 0;
  virtual Tensor maxPool2dBackward(const Tensor& gradOutput, const Tensor& workspace,
                                   const Shape& inputShape, const Pool2dParams& params) const = 0;
  virtual Tensor avgPool2dForward(const Tensor& input, const Pool2dParams& params,
                                  bool countIncludePad) const = 0;
  virtual Tensor avgPool2dBackward(const Tensor& gradOutput, const Shape& inputShape,
                                   const Pool2dParams& params, bool countIncludePad) const = 0;
  virtual Tensor adaptiveAvgPool2dForward(const Tensor& input,
                                          std::array<int64_t, 2> outputSize) const = 0;
  virtual Tensor adaptiveAvgPool2dBackward(const Tensor& gradOutput,
                                           const Shape& inputShape) const = 0;

  // ---- batch normalisation (core/cpu/batch_norm.h; undefined weight = 1, bias = 0) ----------
  // Normalises with the batch's statistics; when runningMean and runningVar are defined (both
  // or neither) they are updated in place as PyTorch does, with `momentum`.
  virtual BatchNormTrainingOutput batchNormTrainingForward(const Tensor& input,
                                                           const Tensor& weight, const Tensor& bias,
                                                           Tensor& runningMean, Tensor& runningVar,
                                                           float momentum, float eps) const = 0;
  // The gradient flows through the batch statistics; savedMean and savedSpread are those of
  // this backend's training forward.
  virtual BatchNormGradients batchNormTrainingBackward(const Tensor& gradOutput,
                                                       const Tensor& input, const Tensor& weight,
                                                       const Tensor& savedMean,
                                                       const Tensor& savedSpread,
                                                       float eps) const = 0;
  // relu(batchNorm(x)) in training, and its backward from relu's output (which decides which
  // gradients pass) and batchNormTrainingForward's saved statistics. A backend with a fused
  // kernel overrides them (the CPU's: one pass over the activation fewer each way); these
  // defaults run the two kernels in turn, so every backend has them.
  virtual BatchNormTrainingOutput batchNormReluTrainingForward(
      const Tensor& input, const Tensor& weight, const Tensor& bias, Tensor& runningMean,
      Tensor& runningVar, float momentum, float eps) const {
    BatchNormTrainingOutput result =
        batchNormTrainingForward(input, weight, bias, runningMean, runningVar, momentum, eps);
    result.output = reluForward(result.output);
    return result;
  }
  virtual BatchNormGradients batchNormReluTrainingBackward(
      const Tensor& gradOutput, const Tensor& reluOutput, const Tensor& input, const Tensor& weight,
      const Tensor& savedMean, const Tensor& savedSpread, float eps) const {
    return batchNormTrainingBackward(reluBackward(gradOutput, reluOutput), input, weight, savedMean,
                                     savedSpread, eps);
  }
  // Normalises with given statistics (the running ones, in evaluation), and its backward, in
  // which the statistics are constants.
  virtual Tensor batchNormInferenceForward(const Tensor& input, const Tensor& weight,
                                           const Tensor& bias, const Tensor& mean,
                                           const Tensor& variance, float eps) const = 0;
  virtual BatchNormGradients batchNormInferenceBackward(const Tensor& gradOutput,
                                                        const Tensor& input, const Tensor& weight,
                                                        const Tensor& mean, const Tensor& variance,
                                                        float eps) const = 0;

  // ---- local response normalisation (core/cpu/lrn.h) ----------------------------------------
  virtual LrnResult lrnForward(const Tensor& input, const LrnParams& params,
                               bool keepWorkspace) const = 0;
  virtual Tensor lrnBackward(const Tensor& gradOutput, const Tensor& input, const Tensor& workspace,
                             const LrnParams& params) const = 0;

  // ---- loss (core/cpu/softmax_cross_entropy.h) ----------------------------------------------
  virtual SoftmaxCrossEntropyForward softmaxCrossEntropyForward(const Tensor& logits,
                                                                const Tensor& labels) const = 0;
  virtual Tensor softmaxCrossEntropyBackward(const Tensor& probabilities, const Tensor& labels,
                                             float gradLoss) const = 0;
  // Cross-entropy with PyTorch's options from log-probabilities [N, C] (core/cpu/nll_loss.h):
  // the loss [N] (Reduction::None) or [1]; weight [C] or undefined (all 1).
  virtual Tensor nllLossForward(const Tensor& logProbabilities, const Tensor& labels,
                                const Tensor& weight, const NllLossParams& params) const = 0;
  // gradLoss of the forward's loss shape -> the gradient of the log-probabilities [N, C]
  virtual Tensor nllLossBackward(const Tensor& gradLoss, const Tensor& logProbabilities,
                                 const Tensor& labels, const Tensor& weight,
                                 const NllLossParams& params) const = 0;

  // ---- dropout (core/cpu/dropout.h) ---------------------------------------------------------
  // A float32 mask on `device` (one of this backend's): 0 with probability p, else 1 / (1 - p).
  // Each backend draws it its own way from `generator`; the op multiplies by it.
  virtual Tensor dropoutMask(const Shape& shape, float p, Generator& generator,
                             Device& device) const = 0;

  // ---- optimizer ----------------------------------------------------------------------------
  // parameter, gradient, momentumBuffer: same shape, float32; momentumBuffer is ignored (and
  // may be undefined) when step.momentum == 0, and written without being read on a first step.
  virtual void sgdUpdate(Tensor& parameter, const Tensor& gradient, Tensor& momentumBuffer,
                         const SgdStep& step) const = 0;
};

namespace detail {
inline void checkSameDevice(const char* op, const Device& first, const Tensor& other) {
  if (!other.defined()) return;
  IMERGE_CHECK(&other.device() == &first, op, ": inputs are on different devices: ", first.name(),
               " and ", other.device().name(), " (", other.describe(),
               "); move them to one device with Tensor::to(device) first");
}
}  // namespace detail

// The backend of the device `first` lives on, after checking that every defined one of
// `others` lives there too (undefined tensors, such as an absent bias, take no part): inputs
// spread over two devices are refused naming the op and both devices, instead of a kernel
// reading a pointer of the wrong kind.
template <typename... Others>
const Backend& backendFor([[maybe_unused]] const char* op, const Tensor& first,
                          const Others&... others) {
  const Device& device = first.device();
  (detail::checkSameDevice(op, device, others), ...);
  return device.backend();
}

}  // namespace imerge
