// Forwarding only, except where the CPU composes kernels the CUDA device fuses (batch-norm
// training updates the running statistics in a second kernel here).
#include "core/cpu/cpu_backend.h"

#include "core/cpu/batch_norm.h"
#include "core/cpu/broadcast.h"
#include "core/cpu/convolution.h"
#include "core/cpu/dropout.h"
#include "core/cpu/elementwise.h"
#include "core/cpu/gemm.h"
#include "core/cpu/log_softmax.h"
#include "core/cpu/lrn.h"
#include "core/cpu/nll_loss.h"
#include "core/cpu/pooling.h"
#include "core/cpu/sgd_update.h"
#include "core/cpu/softmax_cross_entropy.h"

namespace imerge {

namespace {

class CpuBackend final : public Backend {
 public:
  // ---- elementwise and reductions ----
  Tensor add(const Tensor& a, const Tensor& b) const override { return cpu::add(a, b); }
  Tensor sub(const Tensor& a, const Tensor& b) const override { return cpu::sub(a, b); }
  Tensor mul(const Tensor& a, const Tensor& b) const override { return cpu::mul(a, b); }
  Tensor scale(const Tensor& a, float factor) const override { return cpu::scale(a, factor); }
  Tensor reluForward(const Tensor& input) const override { return cpu::reluForward(input); }
  Tensor reluBackward(const Tensor& gradOutput, const Tensor& output) const override {
    return cpu::reluBackward(gradOutput, output);
  }
  float sumAll(const Tensor& input) const override { return cpu::sumAll(input); }
  void addInPlace(Tensor& destination, const Tensor& source) const override {
    cpu::addInPlace(destination, source);
  }
  // Tensor::fill fills host memory itself, for every dtype; this serves the interface.
  void fill(Tensor& destination, float value) const override { destination.fill(value); }

  // ---- broadcasting ----
  Tensor broadcastBinary(BinaryOp op, const Tensor& a, const Tensor& b) const override {
    return cpu::broadcastBinary(op, a, b);
  }
  Tensor sumToShape(const Tensor& input, const Shape& shape) const override {
    return cpu::sumToShape(input, shape);
  }

  // ---- log-softmax ----
  Tensor logSoftmaxForward(const Tensor& input, int64_t dim) const override {
    return cpu::logSoftmaxForward(input, dim);
  }
  Tensor logSoftmaxBackward(const Tensor& gradOutput, const Tensor& output,
                            int64_t dim) const override {
    return cpu::logSoftmaxBackward(gradOutput, output, dim);
  }

  // ---- matrix products ----
  Tensor gemm(const Tensor& a, const Tensor& b, Transpose transposeA,
              Transpose transposeB) const override {
    return cpu::gemm(a, b, transposeA, transposeB);
  }
  Tensor linearForward(const Tensor& x, const Tensor& weight, const Tensor& bias) const override {
    return cpu::linearForward(x, weight, bias);
  }
  Tensor sumRows(const Tensor& matrix) const override { return cpu::sumRows(matrix); }

  // ---- convolution ----
  Tensor conv2dForward(const Tensor& input, const Tensor& weight, const Tensor& bias,
                       const Conv2dParams& params) const override {
    return cpu::conv2dForward(input, weight, bias, params);
  }
  Conv2dGrads conv2dBackward(const Tensor& input, const Tensor& weight, const Tensor& gradOutput,
                             const Conv2dParams& params, bool needInput, bool needWeight,
                             bool needBias) const override {
    return cpu::conv2dBackward(input, weight, gradOutput, params, needInput, needWeight, needBias);
  }

  // ---- pooling ----
  MaxPool2dResult maxPool2dForward(const Tensor& input, const Pool2dParams& params,
                                   bool keepWorkspace) const override {
    return cpu::maxPool2dForward(input, params, keepWorkspace);
  }
  Tensor maxPool2dBackward(const Tensor& gradOutput, const Tensor& workspace,
                           const Shape& inputShape, const Pool2dParams& params) const override {
    return cpu::maxPool2dBackward(gradOutput, workspace, inputShape, params);
  }
  Tensor avgPool2dForward(const Tensor& input, const Pool2dParams& params,
                          bool countIncludePad) const override {
    return cpu::avgPool2dForward(input, params, countIncludePad);
  }
  Tensor avgPool2dBackward(const Tensor& gradOutput, const Shape& inputShape,
                           const Pool2dParams& params, bool countIncludePad) const override {
    return cpu::avgPool2dBackward(gradOutput, inputShape, params, countIncludePad);
  }
  Tensor adaptiveAvgPool2dForward(const Tensor& input,
                                  std::array<int64_t, 2> outputSize) const override {
    return cpu::adaptiveAvgPool2dForward(input, outputSize);
  }
  Tensor adaptiveAvgPool2dBackward(const Tensor& gradOutput,
                                   const Shape& inputShape) const override {
    return cpu::adaptiveAvgPool2dBackward(gradOutput, inputShape);
  }

  // ---- batch normalisation: the saved spread is the biased batch variance ----
  BatchNormTrainingOutput batchNormTrainingForward(const Tensor& input, const Tensor& weight,
                                                   const Tensor& bias, Tensor& runningMean,
                                                   Tensor& runningVar, float momentum,
                                                   float eps) const override {
    return trainingForward(input, weight, bias, runningMean, runningVar, momentum, eps,
                           /*reluAfter=*/false);
  }
  BatchNormGradients batchNormTrainingBackward(const Tensor& gradOutput, const Tensor& input,
                                               const Tensor& weight, const Tensor& savedMean,
                                               const Tensor& savedSpread,
                                               float eps) const override {
    return cpu::batchNormBackward(gradOutput, input, weight, savedMean, savedSpread, eps,
                                  /*statisticsFromBatch=*/true);
  }
  BatchNormTrainingOutput batchNormReluTrainingForward(const Tensor& input, const Tensor& weight,
                                                       const Tensor& bias, Tensor& runningMean,
                                                       Tensor& runningVar, float momentum,
                                                       float eps) const override {
    return trainingForward(input, weight, bias, runningMean, runningVar, momentum, eps,
                           /*reluAfter=*/true);
  }
  BatchNormGradients batchNormReluTrainingBackward(const Tensor& gradOutput,
                                                   const Tensor& reluOutput, const Tensor& input,
                                                   const Tensor& weight, const Tensor& savedMean,
                                                   const Tensor& savedSpread,
                                                   float eps) const override {
    return cpu::batchNormBackward(gradOutput, input, weight, savedMean, savedSpread, eps,
                                  /*statisticsFromBatch=*/true, reluOutput);
  }
  Tensor batchNormInferenceForward(const Tensor& input, const Tensor& weight, const Tensor& bias,
                                   const Tensor& mean, const Tensor& variance,
                                   float eps) const override {
    return cpu::batchNormInferenceForward(input, weight, bias, mean, variance, eps);
  }
  BatchNormGradients batchNormInferenceBackward(const Tensor& gradOutput, const Tensor& input,
                                                const Tensor& weight, const Tensor& mean,
                                                const Tensor& variance, float eps) const override {
    return cpu::batchNormBackward(gradOutput, input, weight, mean, variance, eps,
                                  /*statisticsFromBatch=*/false);
  }

  // ---- local response normalisation ----
  LrnResult lrnForward(const Tensor& input, const LrnParams& params,
                       bool keepWorkspace) const override {
    return cpu::lrnForward(input, params, keepWorkspace);
  }
  Tensor lrnBackward(const Tensor& gradOutput, const Tensor& input, const Tensor& workspace,
                     const LrnParams& params) const override {
    return cpu::lrnBackward(gradOutput, input, workspace, params);
  }

  // ---- loss ----
  SoftmaxCrossEntropyForward softmaxCrossEntropyForward(const Tensor& logits,
                                                        const Tensor& labels) const override {
    return cpu::softmaxCrossEntropyForward(logits, labels);
  }
  Tensor softmaxCrossEntropyBackward(const Tensor& probabilities, const Tensor& labels,
                                     float gradLoss) const override {
    return cpu::softmaxCrossEntropyBackward(probabilities, labels, gradLoss);
  }
  Tensor nllLossForward(const Tensor& logProbabilities, const Tensor& labels, const Tensor& weight,
                        const NllLossParams& params) const override {
    return cpu::nllLossForward(logProbabilities, labels, weight, params);
  }
  Tensor nllLossBackward(const Tensor& gradLoss, const Tensor& logProbabilities,
                         const Tensor& labels, const Tensor& weight,
                         const NllLossParams& params) const override {
    return cpu::nllLossBackward(gradLoss, logProbabilities, labels, weight, params);
  }

  // ---- dropout: drawn serially from the generator, on the host ----
  Tensor dropoutMask(const Shape& shape, float p, Generator& generator,
                     Device& /*device: the CPU*/) const override {
    return cpu::dropoutMask(shape, p, generator);
  }

  // ---- optimizer ----
  void sgdUpdate(Tensor& parameter, const Tensor& gradient, Tensor& momentumBuffer,
                 const SgdStep& step) const override {
    cpu::sgdUpdate(parameter, gradient, momentumBuffer, step);
  }

 private:
  // The saved spread is the biased batch variance.
  static BatchNormTrainingOutput trainingForward(const Tensor& input, const Tensor& weight,
                                                 const Tensor& bias, Tensor& runningMean,
                                                 Tensor& runningVar, float momentum, float eps,
                                                 bool reluAfter) {
    cpu::BatchNormTrainingResult result =
        cpu::batchNormTrainingForward(input, weight, bias, eps, reluAfter);
    if (runningMean.defined() || runningVar.defined()) {
      cpu::updateRunningStatistics(runningMean, runningVar, result.mean, result.variance, momentum,
                                   input.dim(0) * input.dim(2) * input.dim(3));
    }
    return {result.output, result.mean, result.variance};
  }
};

}  // namespace

const Backend& cpuBackend() {
  static const CpuBackend* backend = new CpuBackend();  // never destroyed, as cpuDevice()
  return *backend;
}

}  // namespace imerge
