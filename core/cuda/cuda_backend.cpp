// Forwarding only, except where CUDA composes kernels the CPU fuses (Linear's forward is a
// product and a bias kernel here; on the CPU the bias seeds the product's output).
#include "core/cuda/cuda_backend.h"

#include "core/cuda/batch_norm.h"
#include "core/cuda/convolution.h"
#include "core/cuda/dropout.h"
#include "core/cuda/elementwise.h"
#include "core/cuda/gemm.h"
#include "core/cuda/lrn.h"
#include "core/cuda/pooling.h"
#include "core/cuda/sgd_update.h"
#include "core/cuda/softmax_cross_entropy.h"

namespace imerge {

namespace {

// The kernels CUDA does not have yet: a clear refusal instead of a wrong answer.
[[noreturn]] void notOnCuda(const char* op, const Tensor& input) {
  IMERGE_FAIL(op, ": not implemented on CUDA yet (", input.describe(), " on ",
              input.device().name(), "); move the tensors to the CPU with Tensor::to(cpuDevice())");
}

class CudaBackend final : public Backend {
 public:
  // ---- elementwise and reductions ----
  Tensor add(const Tensor& a, const Tensor& b) const override { return cuda::add(a, b); }
  Tensor sub(const Tensor& a, const Tensor& b) const override { return cuda::sub(a, b); }
  Tensor mul(const Tensor& a, const Tensor& b) const override { return cuda::mul(a, b); }
  Tensor scale(const Tensor& a, float factor) const override { return cuda::scale(a, factor); }
  Tensor reluForward(const Tensor& input) const override { return cuda::reluForward(input); }
  Tensor reluBackward(const Tensor& gradOutput, const Tensor& output) const override {
    return cuda::reluBackward(gradOutput, output);
  }
  float sumAll(const Tensor& input) const override { return cuda::sumAll(input); }
  void addInPlace(Tensor& destination, const Tensor& source) const override {
    cuda::addInPlace(destination, source);
  }
  void fill(Tensor& destination, float value) const override { cuda::fill(destination, value); }

  // ---- broadcasting, log-softmax: CPU only for now ----
  Tensor broadcastBinary(BinaryOp, const Tensor& a, const Tensor&) const override {
    notOnCuda("broadcasting add/sub/mul", a);
  }
  Tensor sumToShape(const Tensor& input, const Shape&) const override {
    notOnCuda("sumToShape (the backward of broadcasting)", input);
  }
  Tensor logSoftmaxForward(const Tensor& input, int64_t) const override {
    notOnCuda("logSoftmax", input);
  }
  Tensor logSoftmaxBackward(const Tensor& gradOutput, const Tensor&, int64_t) const override {
    notOnCuda("logSoftmax backward", gradOutput);
  }

  // ---- matrix products ----
  Tensor gemm(const Tensor& a, const Tensor& b, Transpose transposeA,
              Transpose transposeB) const override {
    return cuda::gemm(a, b, transposeA, transposeB);
  }
  Tensor linearForward(const Tensor& x, const Tensor& weight, const Tensor& bias) const override {
    Tensor out = cuda::gemm(x, weight, Transpose::No, Transpose::Yes);
    if (bias.defined()) cuda::addRowInPlace(out, bias);
    return out;
  }
  Tensor sumRows(const Tensor& matrix) const override { return cuda::sumRows(matrix); }

  // ---- convolution ----
  Tensor conv2dForward(const Tensor& input, const Tensor& weight, const Tensor& bias,
                       const Conv2dParams& params) const override {
    return cuda::conv2dForward(input, weight, bias, params);
  }
  Conv2dGrads conv2dBackward(const Tensor& input, const Tensor& weight, const Tensor& gradOutput,
                             const Conv2dParams& params, bool needInput, bool needWeight,
                             bool needBias) const override {
    return cuda::conv2dBackward(input, weight, gradOutput, params, needInput, needWeight, needBias);
  }

  // ---- pooling ----
  MaxPool2dResult maxPool2dForward(const Tensor& input, const Pool2dParams& params,
                                   bool keepWorkspace) const override {
    return cuda::maxPool2dForward(input, params, keepWorkspace);
  }
  Tensor maxPool2dBackward(const Tensor& gradOutput, const Tensor& workspace,
                           const Shape& inputShape, const Pool2dParams& params) const override {
    return cuda::maxPool2dBackward(gradOutput, workspace, inputShape, params);
  }
  Tensor avgPool2dForward(const Tensor& input, const Pool2dParams& params,
                          bool countIncludePad) const override {
    return cuda::avgPool2dForward(input, params, countIncludePad);
  }
  Tensor avgPool2dBackward(const Tensor& gradOutput, const Shape& inputShape,
                           const Pool2dParams& params, bool countIncludePad) const override {
    return cuda::avgPool2dBackward(gradOutput, inputShape, params, countIncludePad);
  }
  Tensor adaptiveAvgPool2dForward(const Tensor& input,
                                  std::array<int64_t, 2> outputSize) const override {
    return cuda::adaptiveAvgPool2dForward(input, outputSize);
  }
  Tensor adaptiveAvgPool2dBackward(const Tensor& gradOutput,
                                   const Shape& inputShape) const override {
    return cuda::adaptiveAvgPool2dBackward(gradOutput, inputShape);
  }

  // ---- batch normalisation: cuDNN updates the running statistics in its forward and keeps
  // 1 / sqrt(variance + eps), which its backward takes, as the saved spread ----
  BatchNormTrainingOutput batchNormTrainingForward(const Tensor& input, const Tensor& weight,
                                                   const Tensor& bias, Tensor& runningMean,
                                                   Tensor& runningVar, float momentum,
                                                   float eps) const override {
    cuda::BatchNormTrainingResult result =
        cuda::batchNormTrainingForward(input, weight, bias, runningMean, runningVar, momentum, eps);
    return {result.output, result.savedMean, result.savedInvStd};
  }
  BatchNormGradients batchNormTrainingBackward(const Tensor& gradOutput, const Tensor& input,
                                               const Tensor& weight, const Tensor& savedMean,
                                               const Tensor& savedSpread,
                                               float eps) const override {
    return cuda::batchNormTrainingBackward(gradOutput, input, weight, savedMean, savedSpread, eps);
  }
  Tensor batchNormInferenceForward(const Tensor& input, const Tensor& weight, const Tensor& bias,
                                   const Tensor& mean, const Tensor& variance,
                                   float eps) const override {
    return cuda::batchNormInferenceForward(input, weight, bias, mean, variance, eps);
  }
  BatchNormGradients batchNormInferenceBackward(const Tensor& gradOutput, const Tensor& input,
                                                const Tensor& weight, const Tensor& mean,
                                                const Tensor& variance, float eps) const override {
    return cuda::batchNormInferenceBackward(gradOutput, input, weight, mean, variance, eps);
  }

  // ---- local response normalisation ----
  LrnResult lrnForward(const Tensor& input, const LrnParams& params,
                       bool keepWorkspace) const override {
    return cuda::lrnForward(input, params, keepWorkspace);
  }
  Tensor lrnBackward(const Tensor& gradOutput, const Tensor& input, const Tensor& workspace,
                     const LrnParams& params) const override {
    return cuda::lrnBackward(gradOutput, input, workspace, params);
  }

  // ---- loss ----
  SoftmaxCrossEntropyForward softmaxCrossEntropyForward(const Tensor& logits,
                                                        const Tensor& labels) const override {
    return cuda::softmaxCrossEntropyForward(logits, labels);
  }
  Tensor softmaxCrossEntropyBackward(const Tensor& probabilities, const Tensor& labels,
                                     float gradLoss) const override {
    return cuda::softmaxCrossEntropyBackward(probabilities, labels, gradLoss);
  }
  // crossEntropy with default options takes the fused kernels above on CUDA too.
  Tensor nllLossForward(const Tensor& logProbabilities, const Tensor&, const Tensor&,
                        const NllLossParams&) const override {
    notOnCuda(
        "crossEntropy with class weights, label smoothing, ignored labels or a reduction "
        "other than the mean",
        logProbabilities);
  }
  Tensor nllLossBackward(const Tensor& gradLoss, const Tensor&, const Tensor&, const Tensor&,
                         const NllLossParams&) const override {
    notOnCuda("crossEntropy backward", gradLoss);
  }

  // ---- dropout: drawn on the device from one seed taken from the generator ----
  Tensor dropoutMask(const Shape& shape, float p, Generator& generator,
                     Device& device) const override {
    return cuda::dropoutMask(shape, p, generator, device);
  }

  // ---- optimizer ----
  void sgdUpdate(Tensor& parameter, const Tensor& gradient, Tensor& momentumBuffer,
                 const SgdStep& step) const override {
    cuda::sgdUpdate(parameter, gradient, momentumBuffer, step);
  }
};

}  // namespace

const Backend& cudaBackend() {
  static const CudaBackend* backend = new CudaBackend();  // never destroyed, as the devices
  return *backend;
}

}  // namespace imerge
