// Elementwise, reduction, shape and dropout ops: forward values, finite-difference gradients,
// broadcasting against PyTorch (tests/reference/torch_elementwise.py), views, dropout's
// statistics and determinism, and the messages bad inputs get.
#include "autograd/ops/elementwise.h"

#include <gtest/gtest.h>

#include <cmath>
#include <span>
#include <string>
#include <vector>

#include "autograd/grad_mode.h"
#include "core/broadcast.h"
#include "support/compare.h"
#include "support/error_text.h"
#include "support/gradcheck.h"
#include "support/reference_data.h"
#include "support/tensor_builders.h"

namespace imerge {
namespace {

using autograd::Variable;
using testing::errorMessage;
using testing::expectContains;
using testing::expectGradientsMatchFiniteDifferences;
using testing::floats;
using testing::randomTensor;

// Random values with |v| >= 0.2, so a finite-difference step never crosses ReLU's kink.
Tensor awayFromZero(const Shape& shape, uint64_t seed) {
  Tensor tensor = randomTensor(shape, seed, -1.0f, 1.0f);
  float* values = tensor.data<float>();
  for (int64_t i = 0; i < tensor.numel(); ++i) {
    values[i] += values[i] >= 0 ? 0.2f : -0.2f;
  }
  return tensor;
}

Variable param(const Shape& shape, uint64_t seed) {
  return Variable(randomTensor(shape, seed), true);
}

// ---- forward values ------------------------------------------------------------------------

TEST(ElementwiseForward, ComputesTheExpectedValues) {
  Variable a(floats({1, -2, 3, -4}, {2, 2}));
  Variable b(floats({5, 6, -7, 8}, {2, 2}));
  EXPECT_EQ(autograd::add(a, b).tensor().toVector(), (std::vector<float>{6, 4, -4, 4}));
  EXPECT_EQ(autograd::sub(a, b).tensor().toVector(), (std::vector<float>{-4, -8, 10, -12}));
  EXPECT_EQ(autograd::mul(a, b).tensor().toVector(), (std::vector<float>{5, -12, -21, -32}));
  EXPECT_EQ(autograd::scale(a, -0.5f).tensor().toVector(),
            (std::vector<float>{-0.5f, 1, -1.5f, 2}));
  EXPECT_EQ(autograd::relu(a).tensor().toVector(), (std::vector<float>{1, 0, 3, 0}));
  Variable total = autograd::sum(a);
  EXPECT_EQ(total.shape(), Shape({1}));
  EXPECT_FLOAT_EQ(total.tensor().item(), -2.0f);
  Variable average = autograd::mean(a);
  EXPECT_EQ(average.shape(), Shape({1}));
  EXPECT_FLOAT_EQ(average.tensor().item(), -0.5f);
}

TEST(ElementwiseForward, LargeTensorsTakeTheParallelPath) {
  // A million elements: past the kernels' OpenMP threshold. A float running sum of a million
  // 0.1s drifts by hundreds; the double accumulator keeps the sum exact to float precision.
  const int64_t count = 1'000'000;
  Variable a(Tensor::full({count}, 0.1f), true);
  Variable b(Tensor::full({count}, 2.0f), true);
  EXPECT_NEAR(autograd::sum(a).tensor().item(), 100000.0f, 1.0f);
  EXPECT_NEAR(autograd::mean(a).tensor().item(), 0.1f, 1e-6f);
  Variable product = autograd::mul(a, b);
  autograd::sum(product).backward();
  const std::vector<float> gradA = a.grad().toVector();
  const std::vector<float> values = product.tensor().toVector();
  for (int64_t i = 0; i < count; i += 9973) {
    ASSERT_FLOAT_EQ(values[i], 0.2f);
    ASSERT_FLOAT_EQ(gradA[i], 2.0f);
  }
}

TEST(ElementwiseForward, OpsOnInputsWithoutGradRecordNoGraph) {
  Variable a(floats({1, 2}, {2}));
  Variable out = autograd::relu(autograd::add(a, a));
  EXPECT_FALSE(out.requiresGrad());
  EXPECT_TRUE(out.isLeaf());
}

TEST(ElementwiseForward, NoGradModeRecordsNoGraph) {
  Variable w = param({3}, 1);
  autograd::NoGradGuard noGrad;
  Variable out = autograd::sum(autograd::mul(w, w));
  EXPECT_FALSE(out.requiresGrad());
  EXPECT_TRUE(out.isLeaf());
}

// ---- gradients by finite differences ----------------------------------------------------

TEST(ElementwiseGradient, Add) {
  expectGradientsMatchFiniteDifferences([](const auto& in) { return autograd::add(in[0], in[1]); },
                                        {param({3, 4}, 1), param({3, 4}, 2)});
}

TEST(ElementwiseGradient, Sub) {
  expectGradientsMatchFiniteDifferences([](const auto& in) { return autograd::sub(in[0], in[1]); },
                                        {param({3, 4}, 3), param({3, 4}, 4)});
}

TEST(ElementwiseGradient, Mul) {
  expectGradientsMatchFiniteDifferences([](const auto& in) { return autograd::mul(in[0], in[1]); },
                                        {param({2, 5}, 5), param({2, 5}, 6)});
}

TEST(ElementwiseGradient, MulOfAVariableWithItself) {
  // Both uses reach the same variable; its gradient is the sum of the two, 2x.
  expectGradientsMatchFiniteDifferences([](const auto& in) { return autograd::mul(in[0], in[0]); },
                                        {param({7}, 7)});
}

TEST(ElementwiseGradient, OnlyTheInputThatRequiresGradGetsOne) {
  Variable constant(randomTensor({4}, 8));
  expectGradientsMatchFiniteDifferences([](const auto& in) { return autograd::mul(in[0], in[1]); },
                                        {param({4}, 9), constant});
  EXPECT_FALSE(constant.hasGrad());
}

TEST(ElementwiseGradient, Scale) {
  expectGradientsMatchFiniteDifferences(
      [](const auto& in) { return autograd::scale(in[0], -2.5f); }, {param({3, 3}, 10)});
}

TEST(ElementwiseGradient, Relu) {
  expectGradientsMatchFiniteDifferences([](const auto& in) { return autograd::relu(in[0]); },
                                        {Variable(awayFromZero({4, 6}, 11), true)});
}

TEST(ElementwiseGradient, Sum) {
  expectGradientsMatchFiniteDifferences([](const auto& in) { return autograd::sum(in[0]); },
                                        {param({2, 3, 4}, 12)});
}

TEST(ElementwiseGradient, Mean) {
  expectGradientsMatchFiniteDifferences([](const auto& in) { return autograd::mean(in[0]); },
                                        {param({5, 3}, 13)});
}

TEST(ElementwiseGradient, Reshape) {
  expectGradientsMatchFiniteDifferences(
      [](const auto& in) {
        return autograd::reshape(in[0], {3, -1});
      },
      {param({2, 3, 2}, 14)});
}

TEST(ElementwiseGradient, Flatten) {
  expectGradientsMatchFiniteDifferences([](const auto& in) { return autograd::flatten(in[0]); },
                                        {param({2, 3, 2, 2}, 15)});
}

TEST(ElementwiseGradient, Dropout) {
  // A fresh generator per call gives every evaluation the same mask.
  expectGradientsMatchFiniteDifferences(
      [](const auto& in) {
        Generator generator(42);
        return autograd::dropout(in[0], 0.4f, true, generator);
      },
      {param({6, 5}, 16)});
}

TEST(ElementwiseGradient, Composite) {
  // mean(relu(a * b - c) * 3): every op's backward in one graph, c used twice.
  expectGradientsMatchFiniteDifferences(
      [](const auto& in) {
        Variable inner = autograd::sub(autograd::mul(in[0], in[1]), in[2]);
        return autograd::mean(autograd::scale(autograd::mul(autograd::relu(inner), in[2]), 3.0f));
      },
      {Variable(awayFromZero({8}, 17), true), Variable(awayFromZero({8}, 18), true),
       Variable(awayFromZero({8}, 19), true)},
      {.epsilon = 1e-3f, .rtol = 2e-2f, .atol = 2e-3f});
}

// ---- broadcasting ---------------------------------------------------------------------------

Variable binaryOp(const std::string& op, const Variable& a, const Variable& b) {
  if (op == "add") return autograd::add(a, b);
  if (op == "sub") return autograd::sub(a, b);
  return autograd::mul(a, b);
}

class BroadcastReference : public ::testing::TestWithParam<std::string> {};

TEST_P(BroadcastReference, ForwardAndBackwardMatchPyTorch) {
  const testing::ReferenceCase reference =
      testing::loadReferenceCase("elementwise.json", GetParam());
  Variable a(reference.tensor("a"), true);
  Variable b(reference.tensor("b"), true);
  ASSERT_NE(a.shape(), b.shape()) << "a broadcasting case";
  Variable out = binaryOp(reference.options().at("op").get<std::string>(), a, b);
  testing::expectAllClose(out.tensor(), reference.tensor("output"), 1e-5f, 1e-6f, "output");
  out.backward(reference.tensor("grad_output"));
  // The gradients have their inputs' shapes: summed over what broadcasting stretched.
  testing::expectAllClose(a.grad(), reference.tensor("grad_a"), 1e-5f, 1e-6f, "grad_a");
  testing::expectAllClose(b.grad(), reference.tensor("grad_b"), 1e-5f, 1e-6f, "grad_b");
}

INSTANTIATE_TEST_SUITE_P(Cases, BroadcastReference,
                         ::testing::Values("add_row", "add_bias_nchw", "add_smaller_first",
                                           "add_both_stretch", "sub_outer", "sub_scalar_like",
                                           "sub_middle", "mul_column", "mul_both_stretch",
                                           "mul_rank4"),
                         [](const auto& info) { return info.param; });

TEST(Broadcast, ShapesFollowNumPysRules) {
  EXPECT_EQ(broadcastShapes("t", {4, 1, 3}, {5, 1}), Shape({4, 5, 3}));
  EXPECT_EQ(broadcastShapes("t", {3}, {2, 3}), Shape({2, 3}));
  EXPECT_EQ(broadcastShapes("t", {2, 1}, {1, 3}), Shape({2, 3}));
  EXPECT_EQ(broadcastShapes("t", {1}, {2, 0}), Shape({2, 0}));
  EXPECT_EQ(broadcastShapes("t", {}, {2, 3}), Shape({2, 3}));
  EXPECT_EQ(broadcastStrides({3, 1}, {2, 3, 4}), (std::vector<int64_t>{0, 1, 0}));
  EXPECT_EQ(broadcastStrides({2, 3, 4}, {2, 3, 4}), (std::vector<int64_t>{12, 4, 1}));
  EXPECT_TRUE(broadcastsTo({3, 1}, {2, 3, 4}));
  EXPECT_FALSE(broadcastsTo({2, 3, 4}, {3, 4}));
  EXPECT_FALSE(broadcastsTo({3, 2}, {3, 4}));
}

TEST(Broadcast, ValuesAreTheStretchedOperands) {
  // [2, 1] op [3]: row i, column j combines a[i] with b[j].
  Variable a(floats({10, 20}, {2, 1}));
  Variable b(floats({1, 2, 3}, {3}));
  EXPECT_EQ(autograd::add(a, b).shape(), Shape({2, 3}));
  EXPECT_EQ(autograd::add(a, b).tensor().toVector(), (std::vector<float>{11, 12, 13, 21, 22, 23}));
  EXPECT_EQ(autograd::sub(b, a).tensor().toVector(),
            (std::vector<float>{-9, -8, -7, -19, -18, -17}));
  EXPECT_EQ(autograd::mul(a, b).tensor().toVector(), (std::vector<float>{10, 20, 30, 20, 40, 60}));
}

TEST(Broadcast, GradientsAreSummedOverTheStretchedDimensions) {
  Variable a(floats({10, 20}, {2, 1}), true);
  Variable b(floats({1, 2, 3}, {3}), true);
  autograd::sum(autograd::mul(a, b)).backward();
  EXPECT_EQ(a.grad().shape(), Shape({2, 1}));
  EXPECT_EQ(a.grad().toVector(), (std::vector<float>{6, 6}));  // sum of b, per row
  EXPECT_EQ(b.grad().shape(), Shape({3}));
  EXPECT_EQ(b.grad().toVector(), (std::vector<float>{30, 30, 30}));  // sum of a, per column
}

struct BroadcastGradCase {
  const char* name;
  const char* op;
  Shape a, b;
};

void PrintTo(const BroadcastGradCase& c, std::ostream* out) {
  *out << c.name;
}

class BroadcastGradCheck : public ::testing::TestWithParam<BroadcastGradCase> {};

TEST_P(BroadcastGradCheck, MatchesFiniteDifferences) {
  const BroadcastGradCase& c = GetParam();
  expectGradientsMatchFiniteDifferences(
      [&](const auto& in) { return binaryOp(c.op, in[0], in[1]); },
      {param(c.a, 40), param(c.b, 41)});
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BroadcastGradCheck,
    ::testing::Values(BroadcastGradCase{"add_row", "add", {3, 4}, {4}},
                      BroadcastGradCase{"add_first_stretched", "add", {1, 4}, {3, 1, 4}},
                      BroadcastGradCase{"sub_both", "sub", {3, 1}, {1, 4}},
                      BroadcastGradCase{"sub_bias", "sub", {2, 3, 2, 2}, {1, 3, 1, 1}},
                      BroadcastGradCase{"mul_column", "mul", {3, 4}, {3, 1}},
                      BroadcastGradCase{"mul_both", "mul", {2, 1, 3}, {4, 1}},
                      BroadcastGradCase{"mul_scalar_like", "mul", {1}, {2, 3}}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(Broadcast, LargeTensorsTakeTheParallelPathAndAgreeWithALoop) {
  // [64, 40, 30] * [40, 1]: 76800 outputs, past the OpenMP threshold.
  const Tensor aValues = randomTensor({64, 40, 30}, 50);
  const Tensor bValues = randomTensor({40, 1}, 51);
  Variable a(aValues, true);
  Variable b(bValues, true);
  Variable out = autograd::mul(a, b);
  const Tensor gradOutput = randomTensor({64, 40, 30}, 52);
  out.backward(gradOutput);
  const float* x = aValues.data<float>();
  const float* y = bValues.data<float>();
  const float* g = gradOutput.data<float>();
  std::vector<float> expected(64 * 40 * 30), expectedGradA(64 * 40 * 30);
  std::vector<double> gradB(40, 0.0);
  for (int64_t i = 0; i < 64; ++i) {
    for (int64_t j = 0; j < 40; ++j) {
      for (int64_t k = 0; k < 30; ++k) {
        const int64_t at = (i * 40 + j) * 30 + k;
        expected[at] = x[at] * y[j];
        expectedGradA[at] = g[at] * y[j];
        gradB[j] += static_cast<double>(g[at]) * x[at];
      }
    }
  }
  const std::vector<float> expectedGradB(gradB.begin(), gradB.end());
  EXPECT_TRUE(testing::allClose(std::span(out.tensor().data<float>(), expected.size()), expected,
                                0.0, 0.0, "output"));
  EXPECT_TRUE(testing::allClose(std::span(a.grad().data<float>(), expectedGradA.size()),
                                expectedGradA, 0.0, 0.0, "grad a"));
  EXPECT_TRUE(testing::allClose(std::span(b.grad().data<float>(), expectedGradB.size()),
                                expectedGradB, 1e-5, 1e-5, "grad b"));
}

TEST(Broadcast, EqualShapesReturnTheGradientUnreduced) {
  // The same-shape path: the output's gradient passes to add's inputs as it is.
  Variable a(randomTensor({3, 4}, 53), true);
  Variable b(randomTensor({3, 4}, 54), true);
  Variable out = autograd::add(a, b);
  const Tensor gradOutput = randomTensor({3, 4}, 55);
  out.backward(gradOutput);
  EXPECT_EQ(a.grad().toVector(), gradOutput.toVector());
  EXPECT_EQ(b.grad().toVector(), gradOutput.toVector());
}

// ---- shape ops ----------------------------------------------------------------------------

TEST(Reshape, IsAViewThatSharesStorage) {
  Variable input(randomTensor({2, 6}, 20), true);
  Variable output = autograd::reshape(input, {3, -1});
  EXPECT_EQ(output.shape(), Shape({3, 4}));
  EXPECT_TRUE(output.tensor().sharesStorageWith(input.tensor()));
  EXPECT_EQ(output.tensor().toVector(), input.tensor().toVector());
}

TEST(Reshape, BackwardReshapesTheGradientBack) {
  Variable input(randomTensor({2, 6}, 21), true);
  Variable output = autograd::reshape(input, {4, 3});
  output.backward(floats({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {4, 3}));
  EXPECT_EQ(input.grad().shape(), Shape({2, 6}));
  EXPECT_EQ(input.grad().toVector(), (std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
}

TEST(Reshape, BadShapeNamesBothShapes) {
  Variable input(Tensor::zeros({2, 3}), true);
  const std::string message = errorMessage([&] { autograd::reshape(input, {4, 2}); });
  expectContains(message, "float32[2, 3]");
  expectContains(message, "[4, 2]");
}

TEST(Flatten, KeepsTheBatchDimension) {
  Variable input(randomTensor({2, 3, 4, 5}, 22), true);
  Variable output = autograd::flatten(input);
  EXPECT_EQ(output.shape(), Shape({2, 60}));
  EXPECT_TRUE(output.tensor().sharesStorageWith(input.tensor()));
  EXPECT_EQ(autograd::flatten(Variable(Tensor::zeros({7}))).shape(), Shape({7, 1}));
  EXPECT_EQ(autograd::flatten(Variable(Tensor::zeros({0, 3, 2}))).shape(), Shape({0, 6}));
}

// ---- dropout --------------------------------------------------------------------------------

TEST(Dropout, ZeroProbabilityIsTheIdentity) {
  Variable input(randomTensor({4, 5}, 23), true);
  Variable output = autograd::dropout(input, 0.0f, true);
  EXPECT_EQ(output.tensor().toVector(), input.tensor().toVector());
  autograd::sum(output).backward();
  EXPECT_EQ(input.grad().toVector(), std::vector<float>(20, 1.0f));
}

TEST(Dropout, EvaluationIsTheIdentityAndDrawsNothing) {
  Variable input(randomTensor({4, 5}, 24), true);
  Generator generator(7);
  const std::string before = generator.state();
  Variable output = autograd::dropout(input, 0.5f, false, generator);
  EXPECT_EQ(output.tensor().toVector(), input.tensor().toVector());
  EXPECT_EQ(generator.state(), before);
}

TEST(Dropout, TrainingZeroesAboutPAndScalesSurvivors) {
  const float p = 0.3f;
  Variable input(Tensor::full({200, 500}, 2.0f), true);
  Generator generator(123);
  Variable output = autograd::dropout(input, p, true, generator);
  const std::vector<float> values = output.tensor().toVector();
  int64_t zeroed = 0;
  for (float value : values) {
    if (value == 0.0f) {
      ++zeroed;
    } else {
      ASSERT_FLOAT_EQ(value, 2.0f / (1.0f - p));
    }
  }
  const double fraction = static_cast<double>(zeroed) / static_cast<double>(values.size());
  // 100000 Bernoulli(0.3) draws: the standard deviation of the fraction is 0.0014.
  EXPECT_NEAR(fraction, p, 0.01);
}

// Each output is 0 or input / (1 - p), a fraction near p of them 0; the gradient is
// gradOutput / (1 - p) exactly where the output survived and 0 where it was dropped. An
// identity (nothing dropped, nothing scaled), a mask drawn again for the backward, or a
// backward without the 1 / (1 - p) each fail it.
TEST(Dropout, GradientIsMaskedAndScaledLikeTheForward) {
  const float p = 0.4f;
  const Tensor values = randomTensor({40, 50}, 8, 0.5f, 1.5f);  // no zeros of its own
  Variable input(values, true);
  Generator generator(9);
  Variable output = autograd::dropout(input, p, true, generator);
  const Tensor gradOutput = randomTensor({40, 50}, 10);
  output.backward(gradOutput);
  const std::vector<float> x = values.toVector(), y = output.tensor().toVector();
  const std::vector<float> dy = gradOutput.toVector(), dx = input.grad().toVector();
  int64_t dropped = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (y[i] == 0.0f) {
      ++dropped;
      ASSERT_EQ(dx[i], 0.0f) << "element " << i << " was dropped in the forward";
    } else {
      ASSERT_FLOAT_EQ(y[i], x[i] / (1.0f - p)) << "element " << i;
      ASSERT_FLOAT_EQ(dx[i], dy[i] / (1.0f - p)) << "element " << i;
    }
  }
  // 2000 draws with p = 0.4: 800 expected, standard deviation 22.
  EXPECT_NEAR(static_cast<double>(dropped), 0.4 * 2000, 100) << "dropped of 2000";
}

TEST(Dropout, SameSeedSameMaskAndOtherSeedOtherMask) {
  Variable input(Tensor::full({1000}, 1.0f));
  Generator first(5);
  Generator second(5);
  Generator third(6);
  const auto a = autograd::dropout(input, 0.5f, true, first).tensor().toVector();
  const auto b = autograd::dropout(input, 0.5f, true, second).tensor().toVector();
  const auto c = autograd::dropout(input, 0.5f, true, third).tensor().toVector();
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  // The generator moves on: the next mask differs from the first.
  EXPECT_NE(autograd::dropout(input, 0.5f, true, first).tensor().toVector(), a);
}

TEST(Dropout, ProbabilityOneDropsEverything) {
  Variable input(randomTensor({50}, 25), true);
  Generator generator(1);
  EXPECT_EQ(autograd::dropout(input, 1.0f, true, generator).tensor().toVector(),
            std::vector<float>(50, 0.0f));
}

TEST(Dropout, RejectsProbabilityOutsideZeroOne) {
  Variable input(Tensor::zeros({3}));
  expectContains(errorMessage([&] { autograd::dropout(input, 1.5f, true); }),
                 "dropout: probability p = 1.5");
  expectContains(errorMessage([&] { autograd::dropout(input, -0.1f, false); }), "outside [0, 1]");
}

// ---- bad inputs -----------------------------------------------------------------------------

TEST(ElementwiseErrors, ShapesThatDoNotBroadcastNameTheOpBothSizesAndBothShapes) {
  // PyTorch: "The size of tensor a (3) must match the size of tensor b (4) at non-singleton
  // dimension 1", the dimension counted in the broadcast result.
  Variable a(Tensor::zeros({2, 3}), true);
  Variable b(Tensor::zeros({4}), true);
  expectContains(errorMessage([&] { autograd::add(a, b); }),
                 "add: the size of tensor a (3) must match the size of tensor b (4) at "
                 "non-singleton dimension 1 (shapes [2, 3] and [4])");
  Variable c(Tensor::zeros({3, 2}), true);
  expectContains(errorMessage([&] { autograd::sub(a, c); }),
                 "sub: the size of tensor a (3) must match the size of tensor b (2) at "
                 "non-singleton dimension 1 (shapes [2, 3] and [3, 2])");
  // A leading dimension of b that a lacks counts from b's start: [5, 2, 1] with [3, 3].
  Variable d(Tensor::zeros({5, 2, 1}), true);
  Variable e(Tensor::zeros({3, 3}), true);
  expectContains(errorMessage([&] { autograd::mul(d, e); }),
                 "mul: the size of tensor a (2) must match the size of tensor b (3) at "
                 "non-singleton dimension 1 (shapes [5, 2, 1] and [3, 3])");
}

TEST(ElementwiseErrors, NonFloatInputsNameTheOpAndDType) {
  Variable labels(Tensor::fromVector(std::vector<int64_t>{1, 2}, {2}));
  Variable values(Tensor::zeros({2}));
  expectContains(errorMessage([&] { autograd::relu(labels); }),
                 "relu: expects float32, got int64[2]");
  expectContains(errorMessage([&] { autograd::add(values, labels); }),
                 "add: expects float32, got float32[2] and int64[2]");
  expectContains(errorMessage([&] { autograd::sum(labels); }), "sum: expects float32");
  expectContains(errorMessage([&] { autograd::dropout(labels, 0.5f, true); }),
                 "dropout: expects float32");
}

TEST(ElementwiseErrors, UndefinedInputsAreReported) {
  expectContains(errorMessage([&] { autograd::relu(Variable()); }), "relu: input is an undefined");
  expectContains(errorMessage([&] { autograd::mul(Variable(), Variable(Tensor::zeros({1}))); }),
                 "mul: input is an undefined");
}

TEST(ElementwiseErrors, MeanOfNothingIsRejected) {
  expectContains(errorMessage([&] {
                   autograd::mean(Variable(Tensor::zeros({0, 3})));
                 }),
                 "mean: input float32[0, 3] has no elements");
}

}  // namespace
}  // namespace imerge
