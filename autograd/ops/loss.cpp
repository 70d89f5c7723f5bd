#include "autograd/ops/loss.h"

#include "autograd/ops/softmax.h"
#include "core/backend.h"

namespace imerge::autograd {

Variable softmaxCrossEntropy(const Variable& logits, const Tensor& labels) {
  IMERGE_CHECK(logits.defined(), "softmaxCrossEntropy: logits are an undefined variable");
  IMERGE_CHECK(labels.defined(), "softmaxCrossEntropy: labels are an undefined tensor");
  // The labels must be where the logits are (a batch moved to the GPU moves both).
  const Backend& backend = backendFor("softmaxCrossEntropy", logits.tensor(), labels);
  // The kernel checks shapes, dtypes and label range, naming this op.
  SoftmaxCrossEntropyForward forward = backend.softmaxCrossEntropyForward(logits.tensor(), labels);
  return Variable(
      Tensor::full({1}, forward.loss, logits.tensor().device()), {logits},
      [probabilities = forward.probabilities, labels, &backend](std::vector<Variable>& inputs,
                                                                const Tensor& gradOutput) {
        const float gradLoss = gradOutput.item();
        inputs[0].addGrad(backend.softmaxCrossEntropyBackward(probabilities, labels, gradLoss));
      });
}

namespace {

// Checks what both paths need and every label, on the host (N integers, copied from a device
// if need be), and says whether any sample is ignored: the fused kernels know no ignore index.
bool checkLabelsAndFindIgnored(const Variable& logits, const Tensor& labels, int64_t ignoreIndex) {
  IMERGE_CHECK(logits.defined(), "crossEntropy: logits are an undefined variable");
  IMERGE_CHECK(labels.defined(), "crossEntropy: labels are an undefined tensor");
  IMERGE_CHECK(logits.tensor().dtype() == DType::Float32 && logits.tensor().ndim() == 2,
               "crossEntropy: logits must be float32 [N, C], got ", logits.tensor().describe());
  IMERGE_CHECK(labels.dtype() == DType::Int64 && labels.ndim() == 1,
               "crossEntropy: labels must be int64 [N], got ", labels.describe());
  IMERGE_CHECK(labels.dim(0) == logits.dim(0), "crossEntropy: logits ", logits.tensor().describe(),
               " and labels ", labels.describe(), " disagree on the batch size N");
  const int64_t classes = logits.dim(1);
  const Tensor host = labels.device().type() == DeviceType::CPU ? labels : labels.to(cpuDevice());
  const int64_t* label = host.data<int64_t>();
  bool ignored = false;
  for (int64_t n = 0; n < host.dim(0); ++n) {
    if (label[n] == ignoreIndex) {
      ignored = true;
      continue;
    }
    IMERGE_CHECK(label[n] >= 0 && label[n] < classes, "crossEntropy: labels[", n, "] = ", label[n],
                 " is out of range for ", classes, " classes: a label must be in [0, ", classes,
                 ") or the ignore index ", ignoreIndex);
  }
  return ignored;
}

}  // namespace

Variable crossEntropy(const Variable& logits, const Tensor& labels,
                      const CrossEntropyOptions& options) {
  const bool ignored = checkLabelsAndFindIgnored(logits, labels, options.ignoreIndex);
  const bool plain = !options.weight.defined() && options.labelSmoothing == 0.0f &&
                     options.reduction == Reduction::Mean;
  if (plain && !ignored) return softmaxCrossEntropy(logits, labels);

  const Backend& backend = backendFor("crossEntropy", logits.tensor(), labels, options.weight);
  const NllLossParams params{options.ignoreIndex, options.labelSmoothing, options.reduction};
  Variable logProbabilities = logSoftmax(logits, 1);  // [N, C]
  // The kernel checks the weight and the smoothing, naming crossEntropy.
  Tensor loss = backend.nllLossForward(logProbabilities.tensor(), labels, options.weight, params);
  return Variable(
      loss, {logProbabilities},
      [logp = logProbabilities.tensor(), labels, weight = options.weight, params, &backend](
          std::vector<Variable>& inputs, const Tensor& gradOutput) {
        inputs[0].addGrad(backend.nllLossBackward(gradOutput, logp, labels, weight, params));
      });
}

}  // namespace imerge::autograd
