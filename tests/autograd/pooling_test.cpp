// Pooling ops: gradients against finite differences, forward and backward against PyTorch
// (tests/reference/torch_pool_norm.py), and the messages bad inputs get.
#include "autograd/ops/pooling.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <string>

#include "autograd/grad_mode.h"
#include "core/cpu/pooling.h"
#include "support/compare.h"
#include "support/error_text.h"
#include "support/gradcheck.h"
#include "support/reference_data.h"

namespace imerge {
namespace {

using autograd::Pool2dOptions;
using autograd::Variable;
using testing::errorMessage;
using testing::expectAllClose;
using testing::expectContains;
using testing::expectGradientsMatchFiniteDifferences;

constexpr float kRtol = 1e-4f;
constexpr float kAtol = 1e-5f;

// Distinct values 0.05 apart in shuffled order: every max-pooling window has one clear winner,
// far beyond the finite-difference step, so the max never switches during the check.
Tensor distinctValues(const Shape& shape, uint32_t seed) {
  std::vector<float> values(shapeNumel(shape));
  std::iota(values.begin(), values.end(), 0.0f);
  std::shuffle(values.begin(), values.end(), std::mt19937(seed));
  for (float& value : values) value = value * 0.05f - 1.0f;
  return Tensor::fromVector(values, shape);
}

Pool2dOptions pool(std::array<int64_t, 2> kernel, std::array<int64_t, 2> stride,
                   std::array<int64_t, 2> padding, bool ceilMode = false,
                   bool countIncludePad = true) {
  return Pool2dOptions{kernel, stride, padding, ceilMode, countIncludePad};
}

Pool2dOptions optionsOf(const testing::ReferenceCase& reference) {
  const auto& json = reference.options();
  auto pair = [&](const char* key) {
    return std::array<int64_t, 2>{json[key][0].get<int64_t>(), json[key][1].get<int64_t>()};
  };
  Pool2dOptions options =
      pool(pair("kernel"), pair("stride"), pair("padding"), json["ceil_mode"].get<bool>(),
           json["count_include_pad"].get<bool>());
  if (json.contains("padding_end")) options.paddingEnd = pair("padding_end");
  return options;
}

// `padding` before the input and `paddingEnd` after it.
Pool2dOptions padded(std::array<int64_t, 2> kernel, std::array<int64_t, 2> stride,
                     std::array<int64_t, 2> padding, std::array<int64_t, 2> paddingEnd,
                     bool ceilMode = false, bool countIncludePad = true) {
  Pool2dOptions options = pool(kernel, stride, padding, ceilMode, countIncludePad);
  options.paddingEnd = paddingEnd;
  return options;
}

// Runs `op` on the case's input, seeds backward with its grad_output and compares both ways.
template <typename Op>
void expectMatchesTorch(const std::string& caseName, Op op) {
  SCOPED_TRACE(caseName);
  const testing::ReferenceCase reference = testing::loadReferenceCase("pool_norm.json", caseName);
  Variable input(reference.tensor("input"), true);
  Variable output = op(input, reference);
  expectAllClose(output.tensor(), reference.tensor("output"), kRtol, kAtol, caseName + " output");
  output.backward(reference.tensor("grad_output"));
  expectAllClose(input.grad(), reference.tensor("grad_input"), kRtol, kAtol,
                 caseName + " grad_input");
}

void expectMaxPoolMatchesTorch(const std::string& caseName) {
  expectMatchesTorch(caseName, [](const Variable& input, const testing::ReferenceCase& reference) {
    return autograd::maxPool2d(input, optionsOf(reference));
  });
}

void expectAvgPoolMatchesTorch(const std::string& caseName) {
  expectMatchesTorch(caseName, [](const Variable& input, const testing::ReferenceCase& reference) {
    return autograd::avgPool2d(input, optionsOf(reference));
  });
}

void expectAdaptiveMatchesTorch(const std::string& caseName) {
  expectMatchesTorch(caseName, [](const Variable& input, const testing::ReferenceCase& reference) {
    const auto& size = reference.options()["output_size"];
    return autograd::adaptiveAvgPool2d(input, {size[0].get<int64_t>(), size[1].get<int64_t>()});
  });
}

// ---- output sizes -------------------------------------------------------------------------

TEST(PooledSize, FollowsPyTorchIncludingCeilMode) {
  EXPECT_EQ(cpu::pooledSize(56, 3, 2, 1, false), 28);  // ResNet stem
  EXPECT_EQ(cpu::pooledSize(55, 3, 2, 0, false), 27);  // AlexNet
  EXPECT_EQ(cpu::pooledSize(8, 3, 2, 0, false), 3);
  EXPECT_EQ(cpu::pooledSize(8, 3, 2, 0, true), 4);
  // Ceil mode would give 4, but the 4th window would start at 6 >= 5 + 1: only padding.
  EXPECT_EQ(cpu::pooledSize(5, 2, 2, 1, true), 3);
  EXPECT_EQ(cpu::pooledSize(6, 3, 2, 1, true), 4);
}

TEST(PooledSize, AsymmetricPaddingAddsBothSidesAndCeilModeStopsAtTheInputAndItsBegin) {
  EXPECT_EQ(cpu::pooledSize(7, 3, 2, 0, 1, false), 3);  // (7 + 0 + 1 - 3) / 2 + 1
  EXPECT_EQ(cpu::pooledSize(7, 3, 2, 1, 0, false), 3);
  EXPECT_EQ(cpu::pooledSize(6, 3, 2, 0, 0, false), 2);
  EXPECT_EQ(cpu::pooledSize(6, 3, 2, 0, 1, false), 3);  // one row after completes a window
  // Ceil mode would add a window starting at 4 = 4 + 0: in the end padding alone, so dropped
  // (PyTorch's pooling_output_shape_pad_lr).
  EXPECT_EQ(cpu::pooledSize(4, 2, 2, 0, 1, true), 2);
  EXPECT_EQ(cpu::pooledSize(9, 3, 2, 1, 1, true), cpu::pooledSize(9, 3, 2, 1, true));
}

// ---- finite differences ----------------------------------------------------------------------

TEST(MaxPool2d, GradientMatchesFiniteDifferences) {
  for (const Pool2dOptions& options :
       {pool({2, 2}, {2, 2}, {0, 0}), pool({3, 3}, {2, 2}, {1, 1}),
        pool({3, 3}, {2, 2}, {0, 0}, true), pool({3, 2}, {1, 2}, {1, 0})}) {
    Variable input(distinctValues({2, 2, 7, 7}, 11), true);
    expectGradientsMatchFiniteDifferences(
        [&](const std::vector<Variable>& in) { return autograd::maxPool2d(in[0], options); },
        {input});
  }
}

TEST(AvgPool2d, GradientMatchesFiniteDifferences) {
  for (const Pool2dOptions& options :
       {pool({2, 2}, {2, 2}, {0, 0}), pool({3, 3}, {2, 2}, {1, 1}),
        pool({3, 3}, {2, 2}, {1, 1}, false, false), pool({3, 3}, {2, 2}, {1, 1}, true, true),
        pool({3, 3}, {2, 2}, {1, 1}, true, false)}) {
    Variable input(testing::randomTensor({2, 2, 6, 6}, 12), true);
    expectGradientsMatchFiniteDifferences(
        [&](const std::vector<Variable>& in) { return autograd::avgPool2d(in[0], options); },
        {input});
  }
}

TEST(MaxPool2d, AsymmetricPaddingGradientMatchesFiniteDifferences) {
  for (const Pool2dOptions& options :
       {padded({3, 3}, {2, 2}, {0, 0}, {1, 1}), padded({3, 2}, {2, 1}, {1, 0}, {0, 1}),
        padded({3, 4}, {2, 3}, {1, 2}, {0, 1}, true)}) {
    Variable input(distinctValues({2, 2, 7, 7}, 14), true);
    expectGradientsMatchFiniteDifferences(
        [&](const std::vector<Variable>& in) { return autograd::maxPool2d(in[0], options); },
        {input});
  }
}

TEST(AvgPool2d, AsymmetricPaddingGradientMatchesFiniteDifferences) {
  for (bool countIncludePad : {true, false}) {
    for (const Pool2dOptions& options :
         {padded({3, 3}, {2, 2}, {0, 1}, {1, 0}, false, countIncludePad),
          padded({2, 3}, {2, 2}, {1, 0}, {0, 1}, true, countIncludePad),
          padded({3, 2}, {1, 2}, {1, 1}, {0, 1}, true, countIncludePad)}) {
      Variable input(testing::randomTensor({2, 2, 6, 7}, 15), true);
      expectGradientsMatchFiniteDifferences(
          [&](const std::vector<Variable>& in) { return autograd::avgPool2d(in[0], options); },
          {input});
    }
  }
}

TEST(AdaptiveAvgPool2d, GradientMatchesFiniteDifferences) {
  for (std::array<int64_t, 2> outputSize : {std::array<int64_t, 2>{1, 1}, {3, 3}, {4, 2}, {6, 6}}) {
    Variable input(testing::randomTensor({2, 2, 6, 7}, 13), true);
    expectGradientsMatchFiniteDifferences(
        [&](const std::vector<Variable>& in) {
          return autograd::adaptiveAvgPool2d(in[0], outputSize);
        },
        {input});
  }
}

// ---- against PyTorch --------------------------------------------------------------------------

TEST(MaxPool2d, MatchesTorch2x2Stride2) {
  expectMaxPoolMatchesTorch("maxpool_2x2_s2");
}
TEST(MaxPool2d, MatchesTorchResNetStem) {
  expectMaxPoolMatchesTorch("maxpool_3x3_s2_p1");
}
TEST(MaxPool2d, MatchesTorchCeilMode) {
  expectMaxPoolMatchesTorch("maxpool_3x3_s2_ceil");
}
TEST(MaxPool2d, MatchesTorchCeilModeDroppingLastWindow) {
  expectMaxPoolMatchesTorch("maxpool_2x2_s2_p1_ceil");
}
TEST(MaxPool2d, MatchesTorchRectangular) {
  expectMaxPoolMatchesTorch("maxpool_rect");
}

TEST(AvgPool2d, MatchesTorchIncludePad) {
  expectAvgPoolMatchesTorch("avgpool_3x3_s2_p1_include");
}
TEST(AvgPool2d, MatchesTorchExcludePad) {
  expectAvgPoolMatchesTorch("avgpool_3x3_s2_p1_exclude");
}
TEST(AvgPool2d, MatchesTorch2x2Stride2) {
  expectAvgPoolMatchesTorch("avgpool_2x2_s2");
}
TEST(AvgPool2d, MatchesTorchCeilModeIncludePad) {
  expectAvgPoolMatchesTorch("avgpool_3x3_s2_p1_ceil_include");
  expectAvgPoolMatchesTorch("avgpool_3x3_s2_ceil_include");
}
TEST(AvgPool2d, MatchesTorchCeilModeExcludePad) {
  expectAvgPoolMatchesTorch("avgpool_3x3_s2_p1_ceil_exclude");
}

// Asymmetric padding: PyTorch pads with F.pad first (tests/reference/torch_pool_norm.py).
class PaddedPoolTorch : public ::testing::TestWithParam<std::string> {};

TEST_P(PaddedPoolTorch, MatchesTorchOnAPaddedInput) {
  const std::string& name = GetParam();
  if (name.rfind("maxpool", 0) == 0) {
    expectMaxPoolMatchesTorch(name);
  } else {
    expectAvgPoolMatchesTorch(name);
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, PaddedPoolTorch,
                         ::testing::Values("maxpool_pad_end_only", "maxpool_pad_begin_only",
                                           "maxpool_pad_mixed_ceil", "avgpool_pad_mixed_include",
                                           "avgpool_pad_mixed_exclude",
                                           "avgpool_pad_end_ceil_include",
                                           "avgpool_pad_end_ceil_exclude"),
                         [](const auto& info) { return info.param; });

// By hand: one row [1 2 3 4 5], windows 1x3, stride 2, no padding before, one column after,
// ceil mode. The windows are columns [0, 3), [2, 5) and [4, 7), the last holding input 4, end
// padding 5 and the extra column 6 that ceil mode adds. Counting padding, its divisor stops at
// the real end padding: 2, not 3 (nor 1).
TEST(AvgPool2d, AsymmetricPaddingCountsTheRealPaddingByHand) {
  Variable input(Tensor::fromVector(std::vector<float>{1, 2, 3, 4, 5}, {1, 1, 1, 5}), true);
  const Pool2dOptions include = padded({1, 3}, {1, 2}, {0, 0}, {0, 1}, true, true);
  EXPECT_EQ(autograd::avgPool2d(input, include).tensor().toVector(),
            (std::vector<float>{2, 4, 2.5f}));
  const Pool2dOptions exclude = padded({1, 3}, {1, 2}, {0, 0}, {0, 1}, true, false);
  EXPECT_EQ(autograd::avgPool2d(input, exclude).tensor().toVector(), (std::vector<float>{2, 4, 5}));
  // Without ceil mode the last window does not exist.
  EXPECT_EQ(autograd::avgPool2d(input, padded({1, 3}, {1, 2}, {0, 0}, {0, 1})).shape(),
            Shape({1, 1, 1, 2}));
  // Padding before, none after: [1 2 3 / 4 5 6], kernel 2x2, stride 2, one column before. The
  // windows are columns [-1, 1) and [1, 3): (1 + 4) / 4 and (2 + 3 + 5 + 6) / 4 counting the
  // padding, (1 + 4) / 2 and 16 / 4 not.
  Variable grid(Tensor::fromVector(std::vector<float>{1, 2, 3, 4, 5, 6}, {1, 1, 2, 3}), true);
  EXPECT_EQ(autograd::avgPool2d(grid, padded({2, 2}, {2, 2}, {0, 1}, {0, 0})).tensor().toVector(),
            (std::vector<float>{1.25f, 4}));
  Variable gridOutput =
      autograd::avgPool2d(grid, padded({2, 2}, {2, 2}, {0, 1}, {0, 0}, false, false));
  EXPECT_EQ(gridOutput.tensor().toVector(), (std::vector<float>{2.5f, 4}));
  // Each input's gradient is 1 / its window's divisor.
  gridOutput.backward(Tensor::full({1, 1, 1, 2}, 1.0f));
  EXPECT_EQ(grid.grad().toVector(), (std::vector<float>{0.5f, 0.25f, 0.25f, 0.5f, 0.25f, 0.25f}));
}

TEST(Pool2d, PaddingEndEqualToPaddingIsTheSymmetricCall) {
  const Tensor values = distinctValues({2, 3, 7, 8}, 16);
  const Pool2dOptions symmetric = pool({3, 3}, {2, 2}, {1, 1}, true);
  const Pool2dOptions explicitEnd = padded({3, 3}, {2, 2}, {1, 1}, {1, 1}, true);
  EXPECT_EQ(autograd::maxPool2d(Variable(values), explicitEnd).tensor().toVector(),
            autograd::maxPool2d(Variable(values), symmetric).tensor().toVector());
  EXPECT_EQ(autograd::avgPool2d(Variable(values), explicitEnd).tensor().toVector(),
            autograd::avgPool2d(Variable(values), symmetric).tensor().toVector());
}

TEST(MaxPool2d, RejectsPaddingEndOverHalfTheKernel) {
  Variable input(Tensor::zeros({1, 1, 6, 6}));
  expectContains(errorMessage([&] {
                   autograd::maxPool2d(input, padded({3, 3}, {2, 2}, {0, 0}, {2, 0}));
                 }),
                 "maxPool2d: padding end 2x0 must be non-negative and at most half of kernel 3x3");
  expectContains(errorMessage([&] {
                   autograd::avgPool2d(input, padded({3, 3}, {2, 2}, {0, 0}, {0, -1}));
                 }),
                 "avgPool2d: padding end 0x-1 must be non-negative");
}

TEST(AdaptiveAvgPool2d, MatchesTorchGlobal) {
  expectAdaptiveMatchesTorch("adaptive_6x6_to_1x1");
}
TEST(AdaptiveAvgPool2d, MatchesTorchDivisible) {
  expectAdaptiveMatchesTorch("adaptive_8x8_to_4x4");
}
TEST(AdaptiveAvgPool2d, MatchesTorchNonDivisible) {
  expectAdaptiveMatchesTorch("adaptive_5x5_to_3x3");
  expectAdaptiveMatchesTorch("adaptive_7x7_to_6x6");  // AlexNet and VGG's classifier input
  expectAdaptiveMatchesTorch("adaptive_7x5_to_3x2");
}
TEST(AdaptiveAvgPool2d, MatchesTorchUpsampling) {
  expectAdaptiveMatchesTorch("adaptive_3x3_to_7x7");
}

// ---- modes and repeated calls ---------------------------------------------------------------

TEST(MaxPool2d, NoGradModeGivesTheSameOutputWithoutAGraph) {
  Variable input(distinctValues({2, 3, 8, 8}, 5), true);
  const Pool2dOptions options = pool({3, 3}, {2, 2}, {1, 1});
  Variable withGraph = autograd::maxPool2d(input, options);
  autograd::NoGradGuard noGrad;
  Variable withoutGraph = autograd::maxPool2d(input, options);
  EXPECT_FALSE(withoutGraph.requiresGrad());
  expectAllClose(withoutGraph.tensor(), withGraph.tensor(), 0.0f, 0.0f, "no-grad output");
}

TEST(MaxPool2d, RepeatedCallsReuseThePrimitiveAndAgree) {
  // The second call takes the cached primitive; both must give identical results.
  const Pool2dOptions options = pool({2, 2}, {2, 2}, {0, 0});
  Tensor grad = testing::randomTensor({1, 2, 3, 3}, 3);
  Variable first(distinctValues({1, 2, 6, 6}, 9), true);
  Variable second(first.tensor().clone(), true);
  autograd::maxPool2d(first, options).backward(grad);
  autograd::maxPool2d(second, options).backward(grad);
  expectAllClose(second.grad(), first.grad(), 0.0f, 0.0f, "second call");
}

TEST(MaxPool2d, TiesRouteTheGradientToTheFirstElementLikePyTorch) {
  // All-equal windows are common after ReLU; PyTorch picks the first maximum in row-major order.
  Variable input(Tensor::zeros({1, 1, 4, 4}), true);
  autograd::maxPool2d(input, pool({2, 2}, {2, 2}, {0, 0}))
      .backward(Tensor::full({1, 1, 2, 2}, 1.0f));
  const std::vector<float> expected = {1, 0, 1, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0};
  EXPECT_EQ(input.grad().toVector(), expected);
}

// The plain definition, one window at a time in row-major order: the first maximum wins, and a
// NaN wins whenever it is seen. Returns the output and each window's winner (an index into its
// plane) for input [1, 1, H, W].
std::pair<std::vector<float>, std::vector<int32_t>> naiveMaxPool(const std::vector<float>& x,
                                                                 int64_t height, int64_t width,
                                                                 const Pool2dParams& params) {
  const Shape out =
      cpu::maxPool2dForward(Tensor::zeros({1, 1, height, width}), params, false).output.shape();
  std::vector<float> values;
  std::vector<int32_t> winners;
  for (int64_t oh = 0; oh < out[2]; ++oh) {
    for (int64_t ow = 0; ow < out[3]; ++ow) {
      const int64_t top = oh * params.stride[0] - params.padding[0];
      const int64_t left = ow * params.stride[1] - params.padding[1];
      int64_t best = -1;
      for (int64_t h = std::max<int64_t>(top, 0); h < std::min(top + params.kernel[0], height);
           ++h) {
        for (int64_t w = std::max<int64_t>(left, 0); w < std::min(left + params.kernel[1], width);
             ++w) {
          const float value = x[h * width + w];
          if (best < 0 || value > x[best] || std::isnan(value)) best = h * width + w;
        }
      }
      values.push_back(x[best]);
      winners.push_back(static_cast<int32_t>(best));
    }
  }
  return {values, winners};
}

TEST(MaxPool2d, VectorisedInteriorPicksTheSameWinnersAsThePlainDefinition) {
  // Few distinct values make ties in most windows, and some NaNs; wide rows give the interior
  // columns (whose loop is vectorised) and the clipped edges both.
  std::mt19937 random(17);
  std::uniform_int_distribution<int> level(0, 3), nanChance(0, 40);
  const std::vector<Pool2dParams> cases = {{{3, 3}, {2, 2}, {1, 1}},
                                           {{2, 2}, {2, 2}, {0, 0}},
                                           {{3, 3}, {1, 1}, {1, 1}},
                                           {{3, 2}, {2, 3}, {1, 1}},
                                           {{3, 3}, {2, 2}, {0, 0}, /*ceilMode=*/true}};
  for (const Pool2dParams& params : cases) {
    const int64_t height = 9, width = 37;
    std::vector<float> x(height * width);
    for (float& value : x) {
      value = nanChance(random) == 0 ? std::nanf("") : static_cast<float>(level(random));
    }
    const MaxPool2dResult ours =
        cpu::maxPool2dForward(Tensor::fromVector(x, {1, 1, height, width}), params, true);
    const auto [values, winners] = naiveMaxPool(x, height, width, params);
    const std::vector<float> got = ours.output.toVector();
    ASSERT_EQ(got.size(), values.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_TRUE(got[i] == values[i] || (std::isnan(got[i]) && std::isnan(values[i])))
          << "output " << i << ": " << got[i] << " vs " << values[i];
    }
    const int32_t* workspace = ours.workspace.data<int32_t>();
    EXPECT_EQ(std::vector<int32_t>(workspace, workspace + winners.size()), winners)
        << "kernel " << params.kernel[0] << "x" << params.kernel[1] << " stride "
        << params.stride[1];
  }
}

// ---- bad inputs ------------------------------------------------------------------------------

TEST(MaxPool2d, RejectsInputWithoutFourDimensions) {
  Variable input(Tensor::zeros({3, 4, 4}));
  const std::string message = errorMessage([&] {
    autograd::maxPool2d(input, pool({2, 2}, {2, 2}, {0, 0}));
  });
  expectContains(message, "maxPool2d");
  expectContains(message, "float32[3, 4, 4]");
}

TEST(MaxPool2d, RejectsKernelLargerThanPaddedInput) {
  Variable input(Tensor::zeros({1, 1, 2, 2}));
  const std::string message = errorMessage([&] {
    autograd::maxPool2d(input, pool({3, 3}, {1, 1}, {0, 0}));
  });
  expectContains(message, "maxPool2d: kernel 3x3 larger than padded input 2x2");
  expectContains(message, "[1, 1, 2, 2]");
}

TEST(MaxPool2d, RejectsPaddingOverHalfTheKernel) {
  Variable input(Tensor::zeros({1, 1, 6, 6}));
  const std::string message = errorMessage([&] {
    autograd::maxPool2d(input, pool({2, 2}, {2, 2}, {2, 2}));
  });
  expectContains(message, "padding 2x2 must be at most half of kernel 2x2");
}

TEST(AvgPool2d, RejectsIntegerInput) {
  Variable input(Tensor::zeros({1, 1, 4, 4}, DType::Int64));
  const std::string message = errorMessage([&] {
    autograd::avgPool2d(input, pool({2, 2}, {2, 2}, {0, 0}));
  });
  expectContains(message, "avgPool2d");
  expectContains(message, "int64[1, 1, 4, 4]");
  expectContains(message, "float32");
}

// An empty plane leaves every window empty: refused before a kernel would read outside it.
TEST(MaxPool2d, RejectsAnEmptyPlane) {
  Variable input(Tensor::zeros({1, 1, 0, 4}));
  const std::string message = errorMessage([&] {
    autograd::maxPool2d(input, pool({2, 2}, {1, 1}, {1, 1}));
  });
  expectContains(message, "maxPool2d: input float32[1, 1, 0, 4]");
  expectContains(message, "has an empty H x W plane");
}

TEST(AvgPool2d, RejectsAnEmptyPlane) {
  Variable input(Tensor::zeros({2, 3, 5, 0}));
  const std::string message = errorMessage([&] {
    autograd::avgPool2d(input, pool({2, 2}, {1, 1}, {1, 1}));
  });
  expectContains(message, "avgPool2d: input float32[2, 3, 5, 0]");
  expectContains(message, "has an empty H x W plane");
}

TEST(AdaptiveAvgPool2d, RejectsAnEmptyPlane) {
  Variable input(Tensor::zeros({1, 2, 0, 0}));
  const std::string message = errorMessage([&] { autograd::adaptiveAvgPool2d(input, {1, 1}); });
  expectContains(message, "adaptiveAvgPool2d: input float32[1, 2, 0, 0]");
  expectContains(message, "has an empty H x W plane");
}

TEST(AdaptiveAvgPool2d, RejectsEmptyOutputSize) {
  Variable input(Tensor::zeros({1, 2, 4, 4}));
  const std::string message = errorMessage([&] { autograd::adaptiveAvgPool2d(input, {0, 2}); });
  expectContains(message, "adaptiveAvgPool2d: output size 0x2");
  expectContains(message, "[1, 2, 4, 4]");
}

}  // namespace
}  // namespace imerge
