// Stochastic gradient descent with momentum, Nesterov momentum and weight decay, with the
// exact update of PyTorch's torch.optim.SGD:
//
//   d = grad + weight_decay * p
//   buf = d                                  (first step)
//   buf = momentum * buf + (1 - dampening) * d (later steps)
//   d = nesterov ? d + momentum * buf : buf   (when momentum > 0)
//   p -= lr * d
//
// Parameters without a gradient in this step are left untouched, as in PyTorch.
#pragma once

#include <vector>

#include "autograd/variable.h"

namespace imerge::optim {

struct SgdOptions {
  float learningRate = 0.01f;
  float momentum = 0.0f;
  float dampening = 0.0f;
  float weightDecay = 0.0f;
  bool nesterov = false;
};

class Sgd {
 public:
  Sgd(std::vector<autograd::Variable> parameters, const SgdOptions& options);

  void step();
  // Updates one parameter (an index into the constructor's list) with `gradient` at
  // `learningRate`: the data-parallel `priority` strategy updates each layer when its gradient
  // has arrived, after the loop has moved on to the next step's rate.
  void stepParameter(size_t index, const Tensor& gradient, float learningRate);
  void zeroGrad();

  float learningRate() const { return options_.learningRate; }
  void setLearningRate(float learningRate) { options_.learningRate = learningRate; }
  const SgdOptions& options() const { return options_; }
  const std::vector<autograd::Variable>& parameters() const { return parameters_; }

  // Momentum buffers, one per parameter (undefined before the parameter's first step); for
  // checkpoints.
  std::vector<Tensor>& momentumBuffers() { return momentumBuffers_; }

 private:
  std::vector<autograd::Variable> parameters_;
  std::vector<Tensor> momentumBuffers_;
  SgdOptions options_;
};

}  // namespace imerge::optim
