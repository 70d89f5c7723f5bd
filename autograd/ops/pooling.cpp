#include "autograd/ops/pooling.h"

#include "autograd/grad_mode.h"
#include "core/cpu/pooling.h"
#include "core/cuda/pooling.h"
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

// Whether the input lives on a CUDA device (after checking it is there at all).
bool onCuda(const char* op, const Variable& input) {
  IMERGE_CHECK(input.defined(), op, ": input is undefined");
  return runsOnCuda(op, input.tensor());
}

}  // namespace

Variable maxPool2d(const Variable& input, const Pool2dOptions& options) {
  const bool useCuda = onCuda("maxPool2d", input);
  const cpu::Pool2dParams params = toParams(options);
  const auto forward = useCuda ? cuda::maxPool2dForward : cpu::maxPool2dForward;
  cpu::MaxPool2dResult result = forward(input.tensor(), params, recordsGraph(input));
  return Variable(result.output, {input},
                  [params, workspace = result.workspace, inputShape = input.shape(), useCuda](
                      std::vector<Variable>& inputs, const Tensor& gradOutput) {
                    if (!inputs[0].requiresGrad()) return;
                    const auto backward =
                        useCuda ? cuda::maxPool2dBackward : cpu::maxPool2dBackward;
                    inputs[0].addGrad(backward(gradOutput, workspace, inputShape, params));
                  });
}

Variable avgPool2d(const Variable& input, const Pool2dOptions& options) {
  const bool useCuda = onCuda("avgPool2d", input);
  const cpu::Pool2dParams params = toParams(options);
  const bool countIncludePad = options.countIncludePad;
  const auto forward = useCuda ? cuda::avgPool2dForward : cpu::avgPool2dForward;
  Tensor output = forward(input.tensor(), params, countIncludePad);
  return Variable(output, {input},
                  [params, countIncludePad, inputShape = input.shape(), useCuda](
                      std::vector<Variable>& inputs, const Tensor& gradOutput) {
                    if (!inputs[0].requiresGrad()) return;
                    const auto backward =
                        useCuda ? cuda::avgPool2dBackward : cpu::avgPool2dBackward;
                    inputs[0].addGrad(backward(gradOutput, inputShape, params, countIncludePad));
                  });
}

Variable adaptiveAvgPool2d(const Variable& input, std::array<int64_t, 2> outputSize) {
  const bool useCuda = onCuda("adaptiveAvgPool2d", input);
  const auto forward = useCuda ? cuda::adaptiveAvgPool2dForward : cpu::adaptiveAvgPool2dForward;
  Tensor output = forward(input.tensor(), outputSize);
  return Variable(output, {input},
                  [inputShape = input.shape(), useCuda](std::vector<Variable>& inputs,
                                                        const Tensor& gradOutput) {
                    if (!inputs[0].requiresGrad()) return;
                    const auto backward =
                        useCuda ? cuda::adaptiveAvgPool2dBackward : cpu::adaptiveAvgPool2dBackward;
                    inputs[0].addGrad(backward(gradOutput, inputShape));
                  });
}

}  // namespace imerge::autograd
