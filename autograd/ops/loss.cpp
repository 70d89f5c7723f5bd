#include "autograd/ops/loss.h"

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

}  // namespace imerge::autograd
