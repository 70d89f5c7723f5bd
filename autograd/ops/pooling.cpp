#include "autograd/ops/pooling.h"

#include "autograd/grad_mode.h"
#include "core/backend.h"

namespace imerge::autograd {

namespace {

Pool2dParams toParams(const Pool2dOptions& options) {
  return Pool2dParams{options.kernel, options.stride, options.padding, options.ceilMode,
                      options.paddingEnd};
}

// The backward will run only if a graph is recorded: skip the workspace otherwise.
bool recordsGraph(const Variable& input) {
  return GradMode::enabled() && input.requiresGrad();
}

// The kernels of the input's device (after checking it is there at all).
const Backend& backendOf(const char* op, const Variable& input) {
  IMERGE_CHECK(input.defined(), op, ": input is undefined");
  return backendFor(op, input.tensor());
}

}  // namespace

Variable maxPool2d(const Variable& input, const Pool2dOptions& options) {
  const Backend& backend = backendOf("maxPool2d", input);
  const Pool2dParams params = toParams(options);
  MaxPool2dResult result = backend.maxPool2dForward(input.tensor(), params, recordsGraph(input));
  return Variable(
      result.output, {input},
      [params, workspace = result.workspace, inputShape = input.shape(), &backend](
          std::vector<Variable>& inputs, const Tensor& gradOutput) {
        if (!inputs[0].requiresGrad()) return;
        inputs[0].addGrad(backend.maxPool2dBackward(gradOutput, workspace, inputShape, params));
      });
}

Variable avgPool2d(const Variable& input, const Pool2dOptions& options) {
  const Backend& backend = backendOf("avgPool2d", input);
  const Pool2dParams params = toParams(options);
  const bool countIncludePad = options.countIncludePad;
  Tensor output = backend.avgPool2dForward(input.tensor(), params, countIncludePad);
  return Variable(output, {input},
                  [params, countIncludePad, inputShape = input.shape(), &backend](
                      std::vector<Variable>& inputs, const Tensor& gradOutput) {
                    if (!inputs[0].requiresGrad()) return;
                    inputs[0].addGrad(
                        backend.avgPool2dBackward(gradOutput, inputShape, params, countIncludePad));
                  });
}

Variable adaptiveAvgPool2d(const Variable& input, std::array<int64_t, 2> outputSize) {
  const Backend& backend = backendOf("adaptiveAvgPool2d", input);
  Tensor output = backend.adaptiveAvgPool2dForward(input.tensor(), outputSize);
  return Variable(output, {input},
                  [inputShape = input.shape(), &backend](std::vector<Variable>& inputs,
                                                         const Tensor& gradOutput) {
                    if (!inputs[0].requiresGrad()) return;
                    inputs[0].addGrad(backend.adaptiveAvgPool2dBackward(gradOutput, inputShape));
                  });
}

}  // namespace imerge::autograd
