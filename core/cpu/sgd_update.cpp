#include "core/cpu/sgd_update.h"

namespace imerge::cpu {

void sgdUpdate(Tensor& parameter, const Tensor& gradient, Tensor& momentumBuffer,
               const SgdStep& step) {
  // Plain locals rather than structured bindings: OpenMP regions take these by value.
  const float lr = step.learningRate;
  const float momentum = step.momentum;
  const float keep = step.keep;
  const float decay = step.weightDecay;
  const bool nesterov = step.nesterov;
  const bool firstStep = step.firstStep;
  float* p = parameter.data<float>();
  const float* g = gradient.data<float>();
  const int64_t n = parameter.numel();
  if (momentum == 0.0f) {
#pragma omp parallel for simd if (n > 65536) schedule(static)
    for (int64_t i = 0; i < n; ++i) p[i] -= lr * (g[i] + decay * p[i]);
    return;
  }
  float* buf = momentumBuffer.data<float>();
#pragma omp parallel for simd if (n > 65536) schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    const float d = g[i] + decay * p[i];
    buf[i] = firstStep ? d : momentum * buf[i] + keep * d;
    p[i] -= lr * (nesterov ? d + momentum * buf[i] : buf[i]);
  }
}

}  // namespace imerge::cpu
