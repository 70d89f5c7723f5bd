#include "optim/sgd.h"

#include "core/cuda/sgd_update.h"
#include "core/device_dispatch.h"

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
  if (runsOnCuda("SGD", parameter.tensor(), gradient)) {
    Tensor& buffer = momentumBuffers_[index];
    const bool firstStep = momentum != 0.0f && !buffer.defined();
    if (firstStep) buffer = Tensor::emptyLike(parameter.tensor());
    Tensor value = parameter.tensor();
    cuda::sgdUpdate(value, gradient, buffer,
                    cuda::SgdStep{lr, momentum, keep, decay, nesterov, firstStep});
    return;
  }
  float* p = parameter.tensor().data<float>();
  const float* g = gradient.data<float>();
  const int64_t n = parameter.numel();
  if (momentum == 0.0f) {
#pragma omp parallel for simd if (n > 65536) schedule(static)
    for (int64_t i = 0; i < n; ++i) p[i] -= lr * (g[i] + decay * p[i]);
    return;
  }
  Tensor& bufferTensor = momentumBuffers_[index];
  const bool firstStep = !bufferTensor.defined();
  if (firstStep) bufferTensor = Tensor::empty(parameter.shape());
  float* buf = bufferTensor.data<float>();
#pragma omp parallel for simd if (n > 65536) schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    const float d = g[i] + decay * p[i];
    buf[i] = firstStep ? d : momentum * buf[i] + keep * d;
    p[i] -= lr * (nesterov ? d + momentum * buf[i] : buf[i]);
  }
}

void Sgd::zeroGrad() {
  for (auto& parameter : parameters_) parameter.zeroGrad();
}

}  // namespace imerge::optim
