// conv2d: the forward through the device's conv2dForward (oneDNN on the CPU, cuDNN on CUDA),
// the backward through one conv2dBackward call that computes only the gradients whose inputs
// require them.
#include "autograd/ops/convolution.h"

#include "core/cpu/convolution.h"
#include "core/cuda/convolution.h"
#include "core/device_dispatch.h"

namespace imerge::autograd {

Variable conv2d(const Variable& input, const Variable& weight, const Variable& bias,
                const Conv2dOptions& options) {
  const cpu::Conv2dParams params{options.stride, options.padding, options.dilation, options.groups};
  const Tensor noBias;
  const Tensor& biasTensor = bias.defined() ? bias.tensor() : noBias;
  const bool onCuda = runsOnCuda("conv2d", input.tensor(), weight.tensor(), biasTensor);
  // Both validate every operand and name the one at fault (cpu::conv2dOutputShape).
  Tensor output = onCuda ? cuda::conv2dForward(input.tensor(), weight.tensor(), biasTensor, params)
                         : cpu::conv2dForward(input.tensor(), weight.tensor(), biasTensor, params);

  std::vector<Variable> inputs{input, weight};
  if (bias.defined()) inputs.push_back(bias);
  return Variable(output, std::move(inputs),
                  [params, onCuda](std::vector<Variable>& inputs, const Tensor& gradOutput) {
                    Variable& x = inputs[0];
                    Variable& w = inputs[1];
                    const bool needBias = inputs.size() > 2 && inputs[2].requiresGrad();
                    // The first layer's input is data: skipping its gradient skips a whole
                    // backward-data convolution.
                    const auto backward = onCuda ? cuda::conv2dBackward : cpu::conv2dBackward;
                    cpu::Conv2dGrads grads = backward(x.tensor(), w.tensor(), gradOutput, params,
                                                      x.requiresGrad(), w.requiresGrad(), needBias);
                    if (grads.input.defined()) x.addGrad(grads.input);
                    if (grads.weight.defined()) w.addGrad(grads.weight);
                    if (grads.bias.defined()) inputs[2].addGrad(grads.bias);
                  });
}

}  // namespace imerge::autograd
