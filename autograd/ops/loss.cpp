#include "autograd/ops/loss.h"

#include "core/cpu/softmax_cross_entropy.h"

namespace imerge::autograd {

Variable softmaxCrossEntropy(const Variable& logits, const Tensor& labels) {
  IMERGE_CHECK(logits.defined(), "softmaxCrossEntropy: logits are an undefined variable");
  IMERGE_CHECK(labels.defined(), "softmaxCrossEntropy: labels are an undefined tensor");
  // The kernel checks shapes, dtypes and label range, naming this op.
  cpu::SoftmaxCrossEntropyForward forward =
      cpu::softmaxCrossEntropyForward(logits.tensor(), labels);
  return Variable(Tensor::full({1}, forward.loss), {logits},
                  [probabilities = forward.probabilities, labels](std::vector<Variable>& inputs,
                                                                  const Tensor& gradOutput) {
                    inputs[0].addGrad(
                        cpu::softmaxCrossEntropyBackward(probabilities, labels, gradOutput.item()));
                  });
}

}  // namespace imerge::autograd
