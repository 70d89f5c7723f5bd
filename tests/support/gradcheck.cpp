#include "support/gradcheck.h"

#include <gtest/gtest.h>

#include <cmath>

#include "autograd/grad_mode.h"
#include "core/random.h"

namespace imerge::testing {

using autograd::Variable;

Tensor randomTensor(const Shape& shape, uint64_t seed, float low, float high) {
  Generator generator(seed);
  Tensor tensor = Tensor::empty(shape);
  generator.fillUniform(tensor, low, high);
  return tensor;
}

namespace {
double projectedOutput(const OpUnderTest& op, const std::vector<Variable>& inputs,
                       const Tensor& projection) {
  autograd::NoGradGuard noGrad;
  Tensor output = op(inputs).tensor();
  const float* values = output.data<float>();
  const float* weights = projection.data<float>();
  double total = 0;
  for (int64_t i = 0; i < output.numel(); ++i) total += static_cast<double>(values[i]) * weights[i];
  return total;
}
}  // namespace

void expectGradientsMatchFiniteDifferences(const OpUnderTest& op, std::vector<Variable> inputs,
                                           const GradCheckOptions& options) {
  for (Variable& input : inputs) {
    if (input.defined()) input.zeroGrad();
  }
  Variable output = op(inputs);
  ASSERT_TRUE(output.requiresGrad()) << "the op recorded no graph";
  const Tensor projection = randomTensor(output.shape(), 1234, -1.0f, 1.0f);
  output.backward(projection);

  for (size_t index = 0; index < inputs.size(); ++index) {
    Variable& input = inputs[index];
    if (!input.defined() || !input.requiresGrad()) continue;
    ASSERT_TRUE(input.hasGrad()) << "input " << index << " got no gradient";
    const Tensor analytic = input.grad().clone();
    float* values = input.tensor().data<float>();
    int64_t failures = 0;
    for (int64_t i = 0; i < input.numel(); ++i) {
      const float saved = values[i];
      values[i] = saved + options.epsilon;
      const double plus = projectedOutput(op, inputs, projection);
      values[i] = saved - options.epsilon;
      const double minus = projectedOutput(op, inputs, projection);
      values[i] = saved;
      const double numeric = (plus - minus) / (2.0 * options.epsilon);
      const double exact = analytic.data<float>()[i];
      const double allowed = options.atol + options.rtol * std::fabs(numeric);
      if (!(std::fabs(exact - numeric) <= allowed) && failures++ < 5) {
        ADD_FAILURE() << "input " << index << " (" << input.tensor().describe() << ") element " << i
                      << ": analytic " << exact << ", finite difference " << numeric;
      }
    }
    EXPECT_EQ(failures, 0) << "input " << index << ": " << failures << " of " << input.numel()
                           << " gradient elements disagree with finite differences";
  }
}

}  // namespace imerge::testing
