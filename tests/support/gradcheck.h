// Finite-difference gradient checks for differentiable ops.
//
// The check seeds backward with a fixed random projection R of the output, so the analytic
// gradient of sum(R * f(inputs)) is compared with central differences of the same scalar,
// accumulated in double. Inputs should keep away from kinks (ReLU at 0, ties in max pooling).
#pragma once

#include <functional>
#include <vector>

#include "autograd/variable.h"

namespace imerge::testing {

struct GradCheckOptions {
  float epsilon = 1e-3f;
  float rtol = 1e-2f;
  float atol = 1e-3f;
};

using OpUnderTest = std::function<autograd::Variable(const std::vector<autograd::Variable>&)>;

// Checks d sum(R * op(inputs)) / d input for every input that requires grad.
void expectGradientsMatchFiniteDifferences(const OpUnderTest& op,
                                           std::vector<autograd::Variable> inputs,
                                           const GradCheckOptions& options = {});

// A float32 tensor of uniform values in [low, high) from a fixed seed.
Tensor randomTensor(const Shape& shape, uint64_t seed, float low = -1.0f, float high = 1.0f);

}  // namespace imerge::testing
