// conv2d: finite-difference gradients for every operand, PyTorch forward and backward values
// (tests/reference/torch_conv_linear.py) in both internal layouts and with Winograd forced onto
// the 3x3 stride-1 cases, gradients skipped for inputs that need none, a steady state that
// allocates nothing new, and errors that name the shapes.
#include "autograd/ops/convolution.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>

#include "core/cpu/convolution.h"
#include "core/cpu/elementwise.h"
#include "core/cpu/winograd.h"
#include "support/compare.h"
#include "support/error_text.h"
#include "support/gradcheck.h"
#include "support/reference_data.h"

namespace imerge::autograd {
namespace {

using cpu::ConvLayout;
using testing::errorMessage;
using testing::expectAllClose;
using testing::expectContains;
using testing::expectGradientsMatchFiniteDifferences;
using testing::loadReferenceCase;
using testing::randomTensor;

constexpr const char* kReference = "conv_linear.json";

// Restores the process-wide layout when a test that switched it ends.
class LayoutScope {
 public:
  explicit LayoutScope(ConvLayout layout) : previous_(cpu::convLayout()) {
    cpu::setConvLayout(layout);
  }
  ~LayoutScope() { cpu::setConvLayout(previous_); }

 private:
  ConvLayout previous_;
};

// The same for the algorithm a 3x3 stride-1 convolution runs.
class AlgorithmScope {
 public:
  explicit AlgorithmScope(cpu::ConvAlgorithm algorithm) : previous_(cpu::convAlgorithm()) {
    cpu::setConvAlgorithm(algorithm);
  }
  ~AlgorithmScope() { cpu::setConvAlgorithm(previous_); }

 private:
  cpu::ConvAlgorithm previous_;
};

const char* layoutName(ConvLayout layout) {
  return layout == ConvLayout::Blocked ? "Blocked" : "Plain";
}

// ---- finite differences -------------------------------------------------------------------

struct GradCase {
  std::string name;
  Shape input;
  Shape weight;
  Conv2dOptions options;
  bool bias;
};

class ConvGradCheckTest : public ::testing::TestWithParam<std::tuple<GradCase, ConvLayout>> {};

TEST_P(ConvGradCheckTest, GradientsMatchFiniteDifferences) {
  const auto& [gradCase, layout] = GetParam();
  LayoutScope scope(layout);
  std::vector<Variable> inputs{
      Variable(randomTensor(gradCase.input, 1), true),
      Variable(randomTensor(gradCase.weight, 2), true),
      gradCase.bias ? Variable(randomTensor({gradCase.weight[0]}, 3), true) : Variable()};
  const Conv2dOptions options = gradCase.options;
  expectGradientsMatchFiniteDifferences(
      [options](const std::vector<Variable>& v) { return conv2d(v[0], v[1], v[2], options); },
      inputs);
}

Conv2dOptions makeOptions(std::array<int64_t, 2> stride, std::array<int64_t, 2> padding,
                          std::array<int64_t, 2> dilation, int64_t groups) {
  Conv2dOptions options;
  options.stride = stride;
  options.padding = padding;
  options.dilation = dilation;
  options.groups = groups;
  return options;
}

// Padding `padding` before and `paddingEnd` after the input, stride `stride`.
Conv2dOptions withPaddingEnd(std::array<int64_t, 2> stride, std::array<int64_t, 2> padding,
                             std::array<int64_t, 2> paddingEnd) {
  Conv2dOptions options = makeOptions(stride, padding, {1, 1}, 1);
  options.paddingEnd = paddingEnd;
  return options;
}

const GradCase kGradCases[] = {
    {"Plain3x3", {2, 3, 5, 5}, {4, 3, 3, 3}, makeOptions({1, 1}, {0, 0}, {1, 1}, 1), true},
    {"Stride2Pad1", {1, 2, 6, 6}, {3, 2, 3, 3}, makeOptions({2, 2}, {1, 1}, {1, 1}, 1), true},
    {"Dilation2", {1, 2, 7, 7}, {3, 2, 3, 3}, makeOptions({1, 1}, {1, 1}, {2, 2}, 1), true},
    {"Groups2", {1, 4, 5, 5}, {4, 2, 3, 3}, makeOptions({1, 1}, {1, 1}, {1, 1}, 2), true},
    {"Depthwise", {2, 3, 4, 4}, {3, 1, 3, 3}, makeOptions({1, 1}, {1, 1}, {1, 1}, 3), true},
    {"NoBias", {1, 3, 5, 5}, {2, 3, 3, 3}, makeOptions({1, 1}, {1, 1}, {1, 1}, 1), false},
    {"OneByOne", {2, 5, 3, 3}, {4, 5, 1, 1}, makeOptions({1, 1}, {0, 0}, {1, 1}, 1), true},
    {"Stem7x7", {1, 2, 8, 8}, {2, 2, 7, 7}, makeOptions({2, 2}, {3, 3}, {1, 1}, 1), true},
    {"NonSquare", {1, 2, 6, 7}, {3, 2, 3, 2}, makeOptions({2, 1}, {1, 0}, {1, 2}, 1), true},
    {"PadEndOnly", {1, 2, 5, 5}, {3, 2, 3, 3}, withPaddingEnd({1, 1}, {0, 0}, {1, 2}), true},
    {"PadMixedStride2", {1, 2, 7, 6}, {3, 2, 3, 3}, withPaddingEnd({2, 2}, {1, 0}, {0, 1}), true},
    {"PadSameUpper4x4", {1, 2, 5, 5}, {2, 2, 4, 4}, withPaddingEnd({1, 1}, {1, 1}, {2, 2}), false},
};

INSTANTIATE_TEST_SUITE_P(Cases, ConvGradCheckTest,
                         ::testing::Combine(::testing::ValuesIn(kGradCases),
                                            ::testing::Values(ConvLayout::Blocked,
                                                              ConvLayout::Plain)),
                         [](const auto& info) {
                           return std::get<0>(info.param).name +
                                  layoutName(std::get<1>(info.param));
                         });

// Winograd F(4x4, 3x3) (core/cpu/winograd.h) forced onto small shapes: output sizes that are
// and are not multiples of the 4x4 tile, smaller than one tile, every padding it takes.
const GradCase kWinogradGradCases[] = {
    {"Pad0", {2, 3, 6, 6}, {4, 3, 3, 3}, makeOptions({1, 1}, {0, 0}, {1, 1}, 1), true},
    {"Pad1Ragged", {1, 2, 5, 7}, {3, 2, 3, 3}, makeOptions({1, 1}, {1, 1}, {1, 1}, 1), true},
    {"Pad2NoBias", {2, 2, 3, 4}, {2, 2, 3, 3}, makeOptions({1, 1}, {2, 2}, {1, 1}, 1), false},
    {"SmallerThanATile", {1, 3, 2, 2}, {2, 3, 3, 3}, makeOptions({1, 1}, {1, 1}, {1, 1}, 1), true},
};

class ConvWinogradGradCheckTest : public ::testing::TestWithParam<GradCase> {};

TEST_P(ConvWinogradGradCheckTest, GradientsMatchFiniteDifferences) {
  const GradCase& gradCase = GetParam();
  AlgorithmScope scope(cpu::ConvAlgorithm::Winograd);
  Conv2dParams params;
  params.padding = gradCase.options.padding;
  ASSERT_TRUE(cpu::winogradApplies(gradCase.weight, params));
  std::vector<Variable> inputs{
      Variable(randomTensor(gradCase.input, 1), true),
      Variable(randomTensor(gradCase.weight, 2), true),
      gradCase.bias ? Variable(randomTensor({gradCase.weight[0]}, 3), true) : Variable()};
  const Conv2dOptions options = gradCase.options;
  // A convolution is linear in each operand, so a central difference is exact at any step; a
  // larger step than the default keeps the transforms' rounding (about 1e-6 of the output's
  // scale, divided by the step) out of the difference quotient.
  testing::GradCheckOptions check;
  check.epsilon = 0.05f;
  expectGradientsMatchFiniteDifferences(
      [options](const std::vector<Variable>& v) { return conv2d(v[0], v[1], v[2], options); },
      inputs, check);
}

INSTANTIATE_TEST_SUITE_P(Cases, ConvWinogradGradCheckTest, ::testing::ValuesIn(kWinogradGradCases),
                         [](const auto& info) { return info.param.name; });

// ---- PyTorch reference values -------------------------------------------------------------

void expectMatchesTorch(const Tensor& actual, const Tensor& expected, const std::string& what) {
  float largest = 0.0f;
  for (float value : expected.toVector()) largest = std::max(largest, std::fabs(value));
  // 1e-4 relative; the absolute floor scales with the magnitude so that elements near zero
  // (cancellation in a long sum) are not held to more digits than float32 has.
  expectAllClose(actual, expected, 1e-4f, 1e-5f * std::max(1.0f, largest), what);
}

std::array<int64_t, 2> pair(const nlohmann::json& value) {
  return {value.at(0).get<int64_t>(), value.at(1).get<int64_t>()};
}

class ConvTorchTest : public ::testing::TestWithParam<std::tuple<std::string, ConvLayout>> {};

void expectCaseMatchesTorch(const std::string& caseName) {
  const auto reference = loadReferenceCase(kReference, caseName);
  const auto& json = reference.options();
  Conv2dOptions options = makeOptions(pair(json.at("stride")), pair(json.at("padding")),
                                      pair(json.at("dilation")), json.at("groups"));
  if (json.contains("padding_end")) options.paddingEnd = pair(json.at("padding_end"));
  const bool hasBias = json.at("bias").get<bool>();

  Variable input(reference.tensor("input"), true);
  Variable weight(reference.tensor("weight"), true);
  Variable bias = hasBias ? Variable(reference.tensor("bias"), true) : Variable();
  Variable out = conv2d(input, weight, bias, options);
  expectMatchesTorch(out.tensor(), reference.tensor("output"), caseName + " output");
  out.backward(reference.tensor("grad_output"));
  expectMatchesTorch(input.grad(), reference.tensor("grad_input"), caseName + " grad input");
  expectMatchesTorch(weight.grad(), reference.tensor("grad_weight"), caseName + " grad weight");
  if (hasBias) {
    expectMatchesTorch(bias.grad(), reference.tensor("grad_bias"), caseName + " grad bias");
  }
}

TEST_P(ConvTorchTest, MatchesTorchForwardAndBackward) {
  const auto& [caseName, layout] = GetParam();
  LayoutScope scope(layout);
  expectCaseMatchesTorch(caseName);
}

// The cases Winograd can run (3x3, stride 1), forced onto it.
class ConvWinogradTorchTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ConvWinogradTorchTest, MatchesTorchForwardAndBackward) {
  AlgorithmScope scope(cpu::ConvAlgorithm::Winograd);
  const auto reference = loadReferenceCase(kReference, GetParam());
  Conv2dParams params;
  params.padding = pair(reference.options().at("padding"));
  ASSERT_TRUE(cpu::winogradApplies(reference.tensor("weight").shape(), params));
  expectCaseMatchesTorch(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Cases, ConvWinogradTorchTest,
                         ::testing::Values("conv_basic", "conv_no_bias"));

INSTANTIATE_TEST_SUITE_P(
    Cases, ConvTorchTest,
    ::testing::Combine(::testing::Values("conv_basic", "conv_stride2_pad1", "conv_stride3_uneven",
                                         "conv_dilation2", "conv_groups2", "conv_depthwise",
                                         "conv_depthwise_multiplier2", "conv_no_bias", "conv_1x1",
                                         "conv_stem_7x7_s2_p3", "conv_non_square",
                                         "conv_wide_channels", "conv_pad_end_only",
                                         "conv_pad_mixed_stride2", "conv_pad_same_upper_4x4",
                                         "conv_pad_mixed_dilation_groups", "conv_pad_mixed_3x3"),
                       ::testing::Values(ConvLayout::Blocked, ConvLayout::Plain)),
    [](const auto& info) {
      return std::get<0>(info.param) + "_" + layoutName(std::get<1>(info.param));
    });

// Asymmetric padding is not Winograd's: forced onto it, the 3x3 stride-1 case still runs on
// oneDNN with the right padding (Winograd's tiling pads every side alike).
TEST(Conv2dAsymmetricPadding, WinogradLeavesItToOneDnn) {
  AlgorithmScope scope(cpu::ConvAlgorithm::Winograd);
  const auto reference = loadReferenceCase(kReference, "conv_pad_mixed_3x3");
  Conv2dParams params;
  params.padding = pair(reference.options().at("padding"));
  ASSERT_TRUE(cpu::winogradApplies(reference.tensor("weight").shape(), params));
  params.paddingEnd = pair(reference.options().at("padding_end"));
  EXPECT_FALSE(cpu::winogradApplies(reference.tensor("weight").shape(), params));
  expectCaseMatchesTorch("conv_pad_mixed_3x3");
}

TEST(Conv2dAsymmetricPadding, PaddingEndEqualToPaddingIsTheSymmetricCall) {
  Variable input(randomTensor({2, 3, 7, 6}, 30));
  Variable weight(randomTensor({4, 3, 3, 3}, 31));
  Variable bias(randomTensor({4}, 32));
  const Conv2dOptions symmetric = makeOptions({2, 1}, {1, 2}, {1, 1}, 1);
  Conv2dOptions explicitEnd = symmetric;
  explicitEnd.paddingEnd = {{1, 2}};
  EXPECT_EQ(conv2d(input, weight, bias, explicitEnd).tensor().toVector(),
            conv2d(input, weight, bias, symmetric).tensor().toVector());
}

TEST(Conv2dAsymmetricPadding, OutputSizeCountsBothSidesAndNegativeEndsAreRefused) {
  Variable input(Tensor::zeros({1, 1, 5, 5}));
  Variable weight(Tensor::zeros({1, 1, 3, 3}));
  // 5 + 0 + 2 - 3 + 1 = 5 rows; 5 + 1 + 0 - 3 + 1 = 4 columns.
  EXPECT_EQ(conv2d(input, weight, Variable(), withPaddingEnd({1, 1}, {0, 1}, {2, 0})).shape(),
            Shape({1, 1, 5, 4}));
  expectContains(errorMessage([&] {
                   conv2d(input, weight, Variable(), withPaddingEnd({1, 1}, {0, 0}, {0, -1}));
                 }),
                 "conv2d: padding end -1 must not be negative");
  // Too small even with the padding: the message names both sides.
  Variable tiny(Tensor::zeros({1, 1, 1, 1}));
  expectContains(errorMessage([&] {
                   conv2d(tiny, weight, Variable(), withPaddingEnd({1, 1}, {1, 0}, {0, 0}));
                 }),
                 "with padding 1 before and 0 after is smaller than the dilated kernel extent 3");
}

// ---- the backward entry points on their own -----------------------------------------------

TEST(Conv2dKernels, SeparateBackwardCallsMatchTheCombinedOne) {
  const auto reference = loadReferenceCase(kReference, "conv_groups2");
  const Tensor input = reference.tensor("input");
  const Tensor weight = reference.tensor("weight");
  const Tensor gradOutput = reference.tensor("grad_output");
  cpu::Conv2dParams params;
  params.padding = {1, 1};
  params.groups = 2;
  expectMatchesTorch(cpu::conv2dBackwardData(gradOutput, weight, input.shape(), params),
                     reference.tensor("grad_input"), "conv2dBackwardData");
  const cpu::Conv2dGrads grads =
      cpu::conv2dBackwardWeights(input, gradOutput, weight.shape(), true, params);
  expectMatchesTorch(grads.weight, reference.tensor("grad_weight"), "conv2dBackwardWeights");
  expectMatchesTorch(grads.bias, reference.tensor("grad_bias"), "conv2dBackwardWeights bias");
}

TEST(Conv2dKernels, BiasGradientAloneWhenWeightIsFrozen) {
  const auto reference = loadReferenceCase(kReference, "conv_stride2_pad1");
  Variable input(reference.tensor("input"), false);
  Variable weight(reference.tensor("weight"), false);
  Variable bias(reference.tensor("bias"), true);
  Variable out = conv2d(input, weight, bias, makeOptions({2, 2}, {1, 1}, {1, 1}, 1));
  out.backward(reference.tensor("grad_output"));
  EXPECT_FALSE(weight.hasGrad());
  expectMatchesTorch(bias.grad(), reference.tensor("grad_bias"), "bias-only gradient");
}

TEST(Conv2dKernels, StrideThatSkipsTheLastColumnsNeedsNoRightPadding) {
  // 9 columns, a 1x1 kernel and stride 3 read columns 0, 3, 6: oneDNN's right padding is -2.
  for (ConvLayout layout : {ConvLayout::Blocked, ConvLayout::Plain}) {
    LayoutScope scope(layout);
    std::vector<float> values(81);
    for (int i = 0; i < 81; ++i) values[i] = static_cast<float>(i);
    const Tensor input = Tensor::fromVector(values, {1, 1, 9, 9});
    const Tensor weight = Tensor::full({1, 1, 1, 1}, 1.0f);
    cpu::Conv2dParams params;
    params.stride = {3, 3};
    const Tensor output = cpu::conv2dForward(input, weight, Tensor(), params);
    expectAllClose(
        output,
        Tensor::fromVector(std::vector<float>{0, 3, 6, 27, 30, 33, 54, 57, 60}, {1, 1, 3, 3}), 0.0f,
        0.0f, std::string("subsampled output, ") + layoutName(layout));
    const cpu::Conv2dGrads grads = cpu::conv2dBackward(
        input, weight, Tensor::full({1, 1, 3, 3}, 1.0f), params, true, true, false);
    EXPECT_EQ(grads.weight.item(), 270.0f);
    EXPECT_EQ(cpu::sumAll(grads.input), 9.0f);
    EXPECT_EQ(grads.input.data<float>()[1], 0.0f);  // column 1 is never read
  }
}

// ---- what the backward skips and what the steady state allocates ---------------------------

TEST(Conv2d, InputThatNeedsNoGradientGetsNone) {
  // The first layer's input is data: its gradient would be a wasted convolution.
  Variable input(randomTensor({2, 3, 6, 6}, 4), false);
  Variable weight(randomTensor({4, 3, 3, 3}, 5), true);
  Variable bias(randomTensor({4}, 6), true);
  Variable out = conv2d(input, weight, bias, makeOptions({1, 1}, {1, 1}, {1, 1}, 1));
  out.backward(Tensor::full(out.shape(), 1.0f));
  EXPECT_FALSE(input.hasGrad());
  EXPECT_TRUE(weight.hasGrad());
  ASSERT_TRUE(bias.hasGrad());
  // With a gradient of ones the bias gradient counts the output positions: 2 * 6 * 6.
  expectAllClose(bias.grad(), Tensor::full({4}, 72.0f), 0.0f, 0.0f, "bias grad");
}

TEST(Conv2d, SteadyStateAllocatesNothingFromTheSystem) {
  Variable input(randomTensor({4, 16, 12, 12}, 7), true);
  Variable weight(randomTensor({32, 16, 3, 3}, 8), true);
  Variable bias(randomTensor({32}, 9), true);
  const Conv2dOptions options = makeOptions({1, 1}, {1, 1}, {1, 1}, 1);
  auto step = [&] {
    input.zeroGrad();
    weight.zeroGrad();
    bias.zeroGrad();
    Variable out = conv2d(input, weight, bias, options);
    out.backward(Tensor::full(out.shape(), 1.0f));
  };
  for (int warmup = 0; warmup < 2; ++warmup) step();
  const size_t before = cpuDevice().memoryStats().systemAllocations;
  for (int iteration = 0; iteration < 3; ++iteration) step();
  EXPECT_EQ(cpuDevice().memoryStats().systemAllocations, before)
      << "reordered copies and scratchpads must come back from the caching allocator";
}

// ---- errors -------------------------------------------------------------------------------

TEST(Conv2d, RejectsBadOperandsNamingTheirShapes) {
  const Conv2dOptions plain;
  Variable weight(randomTensor({4, 3, 3, 3}, 10));
  Variable threeD(randomTensor({2, 3, 8}, 11));
  EXPECT_THROW(conv2d(threeD, weight, Variable(), plain), Error);
  expectContains(errorMessage([&] { conv2d(threeD, weight, Variable(), plain); }),
                 "conv2d: input float32[2, 3, 8] must be 4-D [N, C, H, W]");

  Variable fiveChannels(randomTensor({2, 5, 8, 8}, 12));
  expectContains(errorMessage([&] { conv2d(fiveChannels, weight, Variable(), plain); }),
                 "input float32[2, 5, 8, 8] has 5 channels but weight float32[4, 3, 3, 3]");

  Variable input(randomTensor({2, 3, 8, 8}, 13));
  Conv2dOptions groups2;
  groups2.groups = 2;
  expectContains(errorMessage([&] { conv2d(input, weight, Variable(), groups2); }),
                 "groups = 2 does not divide the channels of input float32[2, 3, 8, 8]");

  Variable tiny(randomTensor({1, 3, 2, 2}, 14));
  expectContains(errorMessage([&] { conv2d(tiny, weight, Variable(), plain); }),
                 "input float32[1, 3, 2, 2] with padding 0 is smaller than the dilated "
                 "kernel extent 3");

  Variable wrongBias(randomTensor({3}, 15));
  expectContains(errorMessage([&] { conv2d(input, weight, wrongBias, plain); }),
                 "bias float32[3] must be [4]");

  Variable integers(Tensor::fromVector(std::vector<int64_t>(2 * 3 * 8 * 8, 1), {2, 3, 8, 8}));
  expectContains(errorMessage([&] { conv2d(integers, weight, Variable(), plain); }),
                 "input int64[2, 3, 8, 8] must be float32");

  Conv2dOptions zeroStride;
  zeroStride.stride = {0, 1};
  expectContains(errorMessage([&] { conv2d(input, weight, Variable(), zeroStride); }),
                 "stride 0 must be at least 1");
}

TEST(Conv2dKernels, BackwardRejectsGradOutputOfTheWrongShape) {
  const Tensor input = randomTensor({2, 3, 8, 8}, 16);
  const Tensor weight = randomTensor({4, 3, 3, 3}, 17);
  const Tensor wrongGrad = randomTensor({2, 4, 7, 7}, 18);
  expectContains(
      errorMessage([&] { cpu::conv2dBackward(input, weight, wrongGrad, {}, true, true, true); }),
      "gradOutput float32[2, 4, 7, 7] must be float32[2, 4, 6, 6]");
}

}  // namespace
}  // namespace imerge::autograd
