#include "autograd/ops/pooling.h"

#include "autograd/grad_mode.h"
#include "core/cpu/pooling.h"
#include "core/cuda/not_implemented.h"
#include "core/device_dispatch.h"

namespace imerge::autograd {

namespace {

cpu::Pool2dParams toParams(const Pool2dOptions& options) {
  return cpu::Pool2dParams{options.kernel, options.stride, options.padding, options.ceilMode};
}

// The backward will run only if a graph is recorded: skip the workspace otherwise.
bool recordsGraph(const Variable& input) {
  return GradMode::enabled() && input.requiresGrad();
}

void checkDefined(const char* op, const Variable& input) {
  IMERGE_CHECK(input.defined(), op, ": input is undefined");
  if (runsOnCuda(op, input.tensor())) cuda::notImplemented(op);
}

}  // namespace

Variable maxPool2d(const Variable& input, const Pool2dOptions& options) {
  checkDefined("maxPool2d", input);
  const cpu::Pool2dParams params = toParams(options);
  cpu::MaxPool2dResult result = cpu::maxPool2dForward(input.tensor(), params, recordsGraph(input));
  return Variable(
      result.output, {input},
      [params, workspace = result.workspace, inputShape = input.shape()](
          std::vector<Variable>& inputs, const Tensor& gradOutput) {
        if (inputs[0].requiresGrad()) {
          inputs[0].addGrad(cpu::maxPool2dBackward(gradOutput, workspace, inputShape, params));
        }
      });
}

Variable avgPool2d(const Variable& input, const Pool2dOptions& options) {
  checkDefined("avgPool2d", input);
  const cpu::Pool2dParams params = toParams(options);
  const bool countIncludePad = options.countIncludePad;
  Tensor output = cpu::avgPool2dForward(input.tensor(), params, countIncludePad);
  return Variable(output, {input},
                  [params, countIncludePad, inputShape = input.shape()](
                      std::vector<Variable>& inputs, const Tensor& gradOutput) {
                    if (inputs[0].requiresGrad()) {
                      inputs[0].addGrad(
                          cpu::avgPool2dBackward(gradOutput, inputShape, params, countIncludePad));
                    }
                  });
}

Variable adaptiveAvgPool2d(const Variable& input, std::array<int64_t, 2> outputSize) {
  checkDefined("adaptiveAvgPool2d", input);
  Tensor output = cpu::adaptiveAvgPool2dForward(input.tensor(), outputSize);
  return Variable(
      output, {input},
      [inputShape = input.shape()](std::vector<Variable>& inputs, const Tensor& gradOutput) {
        if (inputs[0].requiresGrad()) {
          inputs[0].addGrad(cpu::adaptiveAvgPool2dBackward(gradOutput, inputShape));
        }
      });
}

}  // namespace imerge::autograd
