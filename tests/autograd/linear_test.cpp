// matmul and linear: finite-difference gradients, PyTorch forward and backward values
// (tests/reference/torch_conv_linear.py), gradients skipped for inputs that need none, and
// errors that name the shapes at fault.
#include "autograd/ops/linear.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "support/compare.h"
#include "support/error_text.h"
#include "support/gradcheck.h"
#include "support/reference_data.h"

namespace imerge::autograd {
namespace {

using testing::errorMessage;
using testing::expectAllClose;
using testing::expectContains;
using testing::expectGradientsMatchFiniteDifferences;
using testing::loadReferenceCase;
using testing::randomTensor;

constexpr const char* kReference = "conv_linear.json";

// PyTorch agreement to 1e-4 relative; the absolute floor scales with the tensor's magnitude so
// that elements near zero (cancellation in long sums) are not held to an impossible standard.
void expectMatchesTorch(const Tensor& actual, const Tensor& expected, const std::string& what) {
  float largest = 0.0f;
  for (float value : expected.toVector()) largest = std::max(largest, std::fabs(value));
  expectAllClose(actual, expected, 1e-4f, 1e-5f * std::max(1.0f, largest), what);
}

TEST(Matmul, GradientsMatchFiniteDifferences) {
  expectGradientsMatchFiniteDifferences(
      [](const std::vector<Variable>& v) { return matmul(v[0], v[1]); },
      {Variable(randomTensor({3, 4}, 1), true), Variable(randomTensor({4, 5}, 2), true)});
}

TEST(Linear, GradientsMatchFiniteDifferencesWithBias) {
  expectGradientsMatchFiniteDifferences(
      [](const std::vector<Variable>& v) { return linear(v[0], v[1], v[2]); },
      {Variable(randomTensor({3, 5}, 3), true), Variable(randomTensor({4, 5}, 4), true),
       Variable(randomTensor({4}, 5), true)});
}

TEST(Linear, GradientsMatchFiniteDifferencesWithoutBias) {
  expectGradientsMatchFiniteDifferences(
      [](const std::vector<Variable>& v) { return linear(v[0], v[1], Variable()); },
      {Variable(randomTensor({2, 6}, 6), true), Variable(randomTensor({3, 6}, 7), true)});
}

TEST(Matmul, MatchesTorchForwardAndBackward) {
  const auto reference = loadReferenceCase(kReference, "matmul");
  Variable a(reference.tensor("a"), true);
  Variable b(reference.tensor("b"), true);
  Variable out = matmul(a, b);
  expectMatchesTorch(out.tensor(), reference.tensor("output"), "matmul output");
  out.backward(reference.tensor("grad_output"));
  expectMatchesTorch(a.grad(), reference.tensor("grad_a"), "matmul grad a");
  expectMatchesTorch(b.grad(), reference.tensor("grad_b"), "matmul grad b");
}

class LinearTorchTest : public ::testing::TestWithParam<std::string> {};

TEST_P(LinearTorchTest, MatchesTorchForwardAndBackward) {
  const auto reference = loadReferenceCase(kReference, GetParam());
  const bool hasBias = reference.options().at("bias").get<bool>();
  Variable input(reference.tensor("input"), true);
  Variable weight(reference.tensor("weight"), true);
  Variable bias = hasBias ? Variable(reference.tensor("bias"), true) : Variable();
  Variable out = linear(input, weight, bias);
  expectMatchesTorch(out.tensor(), reference.tensor("output"), GetParam() + " output");
  out.backward(reference.tensor("grad_output"));
  expectMatchesTorch(input.grad(), reference.tensor("grad_input"), GetParam() + " grad input");
  expectMatchesTorch(weight.grad(), reference.tensor("grad_weight"), GetParam() + " grad weight");
  if (hasBias) {
    expectMatchesTorch(bias.grad(), reference.tensor("grad_bias"), GetParam() + " grad bias");
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, LinearTorchTest,
                         ::testing::Values("linear_bias", "linear_no_bias", "linear_wide"));

TEST(Linear, InputThatNeedsNoGradientGetsNone) {
  Variable input(randomTensor({3, 5}, 8), false);
  Variable weight(randomTensor({4, 5}, 9), true);
  Variable bias(randomTensor({4}, 10), true);
  Variable out = linear(input, weight, bias);
  out.backward(Tensor::full({3, 4}, 1.0f));
  EXPECT_FALSE(input.hasGrad());
  EXPECT_TRUE(weight.hasGrad());
  ASSERT_TRUE(bias.hasGrad());
  // With a gradient of ones, the bias gradient is the batch size.
  expectAllClose(bias.grad(), Tensor::full({4}, 3.0f), 0.0f, 0.0f, "bias grad");
}

TEST(Linear, RejectsBadOperandsNamingTheirShapes) {
  Variable input(randomTensor({3, 5}, 11));
  Variable weight(randomTensor({4, 6}, 12));
  EXPECT_THROW(linear(input, weight, Variable()), Error);
  expectContains(errorMessage([&] { linear(input, weight, Variable()); }), "float32[3, 5]");
  expectContains(errorMessage([&] { linear(input, weight, Variable()); }), "float32[4, 6]");

  Variable goodWeight(randomTensor({4, 5}, 13));
  Variable wrongBias(randomTensor({5}, 14));
  expectContains(errorMessage([&] { linear(input, goodWeight, wrongBias); }), "bias float32[5]");

  Variable threeD(randomTensor({2, 3, 5}, 15));
  expectContains(errorMessage([&] { linear(threeD, goodWeight, Variable()); }),
                 "input float32[2, 3, 5] must be 2-D");

  Variable integers(Tensor::fromVector(std::vector<int64_t>(15, 1), {3, 5}));
  expectContains(errorMessage([&] { linear(integers, goodWeight, Variable()); }),
                 "input int64[3, 5] must be float32");
}

TEST(Matmul, RejectsMismatchedInnerSizes) {
  Variable a(randomTensor({3, 4}, 16));
  Variable b(randomTensor({5, 2}, 17));
  EXPECT_THROW(matmul(a, b), Error);
  expectContains(errorMessage([&] { matmul(a, b); }), "a float32[3, 4] x b float32[5, 2]");
}

}  // namespace
}  // namespace imerge::autograd
