// conv2d: the forward through the device's conv2dForward (oneDNN on the CPU, cuDNN on CUDA),
// the backward through one conv2dBackward call that computes only the gradients whose inputs
// require them.
#include "autograd/ops/convolution.h"

#include <utility>

#include "core/backend.h"

namespace imerge::autograd {

Variable conv2d(const Variable& input, const Variable& weight, const Variable& bias,
                const Conv2dOptions& options) {
  const Conv2dParams params{options.stride, options.padding, options.dilation, options.groups,
                            options.paddingEnd};
  const Tensor noBias;
  const Tensor& biasTensor = bias.defined() ? bias.tensor() : noBias;
  const Backend& backend = backendFor("conv2d", input.tensor(), weight.tensor(), biasTensor);
  // Every backend validates every operand and names the one at fault (cpu::conv2dOutputShape).
  Tensor output = backend.conv2dForward(input.tensor(), weight.tensor(), biasTensor, params);

  std::vector<Variable> inputs{input, weight};
  if (bias.defined()) inputs.push_back(bias);
  // Saved for the backward (the input for the weight's gradient, the weight for the input's;
  // the kernels check both shapes).
  const Tensor savedInput = input.tensor();
  const Tensor savedWeight = weight.tensor();
  return Variable(output, std::move(inputs),
                  [params, &backend, savedInput, savedWeight](std::vector<Variable>& inputs,
                                                              const Tensor& gradOutput) {
                    Variable& x = inputs[0];
                    Variable& w = inputs[1];
                    const bool needBias = inputs.size() > 2 && inputs[2].requiresGrad();
                    // The first layer's input is data: skipping its gradient skips a whole
                    // backward-data convolution.
                    Conv2dGrads grads =
                        backend.conv2dBackward(savedInput, savedWeight, gradOutput, params,
                                               x.requiresGrad(), w.requiresGrad(), needBias);
                    if (grads.input.defined()) x.addGrad(std::move(grads.input));
                    if (grads.weight.defined()) w.addGrad(std::move(grads.weight));
                    if (grads.bias.defined()) inputs[2].addGrad(std::move(grads.bias));
                  });
}

}  // namespace imerge::autograd
