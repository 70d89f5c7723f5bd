// logSoftmax: the backward needs only the output (exp(output) is the softmax), so the input is
// not kept.
#include "autograd/ops/softmax.h"

#include "core/backend.h"

namespace imerge::autograd {

Variable logSoftmax(const Variable& input, int64_t dim) {
  IMERGE_CHECK(input.defined(), "logSoftmax: input is an undefined variable");
  const int64_t rank = input.tensor().ndim();
  IMERGE_CHECK(dim >= -rank && dim < rank, "logSoftmax: dimension ", dim, " is out of range for ",
               input.tensor().describe(), " (expected [", -rank, ", ", rank - 1, "])");
  const int64_t axis = dim < 0 ? dim + rank : dim;
  const Backend& backend = backendFor("logSoftmax", input.tensor());
  Tensor output = backend.logSoftmaxForward(input.tensor(), axis);
  return Variable(
      output, {input},
      [output, axis, &backend](std::vector<Variable>& inputs, const Tensor& gradOutput) {
        inputs[0].addGrad(backend.logSoftmaxBackward(gradOutput, output, axis));
      });
}

}  // namespace imerge::autograd
