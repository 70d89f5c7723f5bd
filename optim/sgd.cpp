#include "optim/sgd.h"

#include "core/backend.h"

namespace imerge::optim {

Sgd::Sgd(std::vector<autograd::Variable> parameters, const SgdOptions& options)
    : parameters_(std::move(parameters)), momentumBuffers_(parameters_.size()), options_(options) {
  IMERGE_CHECK(options.learningRate >= 0.0f, "SGD: learning rate must be >= 0, got ",
               options.learningRate);
  IMERGE_CHECK(options.momentum >= 0.0f, "SGD: momentum must be >= 0, got ", options.momentum);
  IMERGE_CHECK(options.weightDecay >= 0.0f, "SGD: weight decay must be >= 0, got ",
               options.weightDecay);
  IMERGE_CHECK(!options.nesterov || (options.momentum > 0.0f && options.dampening == 0.0f),
               "SGD: Nesterov momentum requires momentum > 0 and dampening 0");
}

void Sgd::step() {
  for (size_t index = 0; index < parameters_.size(); ++index) {
    autograd::Variable& parameter = parameters_[index];
    if (parameter.hasGrad()) stepParameter(index, parameter.grad(), options_.learningRate);
  }
}

void Sgd::stepParameter(size_t index, const Tensor& gradient, float learningRate) {
  IMERGE_CHECK(index < parameters_.size(), "SGD: parameter index ", index, " out of range (",
               parameters_.size(), " parameters)");
  autograd::Variable& parameter = parameters_[index];
  IMERGE_CHECK(gradient.shape() == parameter.shape(), "SGD: gradient ", gradient.describe(),
               " does not match '", parameter.name(), "' ", parameter.tensor().describe());
  const float lr = learningRate;
  const float momentum = options_.momentum;
  const float keep = 1.0f - options_.dampening;
  const float decay = options_.weightDecay;
  const bool nesterov = options_.nesterov;
  const Backend& backend = backendFor("SGD", parameter.tensor(), gradient);
  // The momentum buffer is made on the parameter's device at the first step, which writes it
  // without reading it.
  Tensor& buffer = momentumBuffers_[index];
  const bool firstStep = momentum != 0.0f && !buffer.defined();
  if (firstStep) buffer = Tensor::emptyLike(parameter.tensor());
  Tensor value = parameter.tensor();
  backend.sgdUpdate(value, gradient, buffer,
                    SgdStep{lr, momentum, keep, decay, nesterov, firstStep});
}

void Sgd::zeroGrad() {
  for (auto& parameter : parameters_) parameter.zeroGrad();
}

}  // namespace imerge::optim
