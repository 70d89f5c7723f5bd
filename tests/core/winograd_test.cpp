// Winograd F(4x4, 3x3) (core/cpu/winograd.h) against a direct convolution summed in double, on
// shapes that exercise the eight-lane tails (channels and tile counts not multiples of 8), tiles
// cut by the output's edge, every padding and more than one block of tiles; a hand-computed
// case; and the rule by which conv2d picks it.
#include "core/cpu/winograd.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/cpu/convolution.h"
#include "support/compare.h"
#include "support/gradcheck.h"

namespace imerge {
namespace {

using testing::closeToScale;
using testing::randomTensor;

Conv2dParams padded(int64_t padding) {
  Conv2dParams params;
  params.padding = {padding, padding};
  return params;
}

// The three passes of a 3x3 stride-1 convolution, in double: x [N, C, H, W], w [K, C, 3, 3],
// dy [N, K, Ho, Wo] -> y, dx, dw.
struct DirectResult {
  Tensor output, gradInput, gradWeight;
};

DirectResult directInDouble(const Tensor& x, const Tensor& w, const Tensor& dy, int64_t pad) {
  const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), wd = x.dim(3), k = w.dim(0);
  const int64_t ho = h + 2 * pad - 2, wo = wd + 2 * pad - 2;
  std::vector<double> y(n * k * ho * wo, 0.0), dx(n * c * h * wd, 0.0), dw(k * c * 9, 0.0);
  const float* xs = x.data<float>();
  const float* ws = w.data<float>();
  const float* dys = dy.data<float>();
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t o = 0; o < k; ++o) {
      for (int64_t i = 0; i < c; ++i) {
        for (int64_t r = 0; r < 3; ++r) {
          for (int64_t s = 0; s < 3; ++s) {
            const double weight = ws[(o * c + i) * 9 + r * 3 + s];
            for (int64_t oy = 0; oy < ho; ++oy) {
              const int64_t iy = oy + r - pad;
              if (iy < 0 || iy >= h) continue;
              for (int64_t ox = 0; ox < wo; ++ox) {
                const int64_t ix = ox + s - pad;
                if (ix < 0 || ix >= wd) continue;
                const int64_t xi = ((b * c + i) * h + iy) * wd + ix;
                const int64_t yi = ((b * k + o) * ho + oy) * wo + ox;
                y[yi] += weight * xs[xi];
                dx[xi] += weight * dys[yi];
                dw[(o * c + i) * 9 + r * 3 + s] += static_cast<double>(xs[xi]) * dys[yi];
              }
            }
          }
        }
      }
    }
  }
  auto toTensor = [](const std::vector<double>& values, const Shape& shape) {
    return Tensor::fromVector(std::vector<float>(values.begin(), values.end()), shape);
  };
  return {toTensor(y, {n, k, ho, wo}), toTensor(dx, x.shape()), toTensor(dw, w.shape())};
}

struct Problem {
  std::string name;
  Shape input;
  int64_t outChannels;
  int64_t padding;
};

class WinogradTest : public ::testing::TestWithParam<Problem> {};

TEST_P(WinogradTest, MatchesADirectConvolutionInDouble) {
  const Problem& p = GetParam();
  const Tensor x = randomTensor(p.input, 11);
  const Tensor w = randomTensor({p.outChannels, p.input[1], 3, 3}, 12);
  const Tensor bias = randomTensor({p.outChannels}, 13);
  const Conv2dParams params = padded(p.padding);
  const Shape outputShape = cpu::conv2dOutputShape(x, w, bias, params);
  const Tensor dy = randomTensor(outputShape, 14);
  const DirectResult expected = directInDouble(x, w, dy, p.padding);

  // Float32 with the transforms' constants: a few units of 1e-6 of each result's scale.
  constexpr double kTolerance = 2e-5;
  const Tensor output = cpu::winogradConv2dForward(x, w, Tensor(), params, outputShape);
  EXPECT_TRUE(closeToScale(output, expected.output, kTolerance, p.name + " output"));
  // The bias is added to every element of its channel.
  const Tensor withBias = cpu::winogradConv2dForward(x, w, bias, params, outputShape);
  const int64_t plane = outputShape[2] * outputShape[3];
  for (int64_t i = 0; i < withBias.numel(); i += 7) {
    const int64_t channel = i / plane % p.outChannels;
    ASSERT_NEAR(withBias.data<float>()[i] - output.data<float>()[i], bias.data<float>()[channel],
                1e-5f)
        << p.name << " element " << i;
  }
  EXPECT_TRUE(closeToScale(cpu::winogradConv2dBackwardData(dy, w, x.shape(), params),
                           expected.gradInput, kTolerance, p.name + " grad input"));
  EXPECT_TRUE(closeToScale(cpu::winogradConv2dBackwardWeights(x, dy, w.shape(), params),
                           expected.gradWeight, kTolerance, p.name + " grad weight"));
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, WinogradTest,
    ::testing::Values(
        // 70 channels: eight lanes and a tail of 6; 9x11 outputs cut the last tiles.
        Problem{"Channels70Ragged", {2, 70, 9, 11}, 68, 1}, Problem{"Pad0", {3, 16, 10, 10}, 24, 0},
        Problem{"Pad2", {1, 9, 5, 6}, 5, 2},
        // 2 x 128 x 128 inputs: 2048 tiles of 36 x (4 + 4) values, more than one 16 MiB block.
        Problem{"SeveralBlocks", {2, 4, 128, 128}, 4, 1}, Problem{"Wide", {2, 130, 8, 8}, 129, 1}),
    [](const auto& info) { return info.param.name; });

TEST(Winograd, AllOnesCountTheInputsUnderTheKernel) {
  // A 4x4 plane of ones, a 3x3 kernel of ones, padding 1: each output counts the inputs its
  // window covers (4 at a corner, 6 along an edge, 9 inside); with a gradient of ones each
  // kernel tap counts the outputs whose window puts it inside the input (9, 12 or 16).
  const Tensor ones = Tensor::full({1, 1, 4, 4}, 1.0f);
  const Tensor kernel = Tensor::full({1, 1, 3, 3}, 1.0f);
  const Conv2dParams params = padded(1);
  const Tensor output = cpu::winogradConv2dForward(ones, kernel, Tensor(), params, {1, 1, 4, 4});
  const std::vector<float> counts{4, 6, 6, 4, 6, 9, 9, 6, 6, 9, 9, 6, 4, 6, 6, 4};
  EXPECT_TRUE(
      testing::allClose(output, Tensor::fromVector(counts, {1, 1, 4, 4}), 0.0, 1e-5, "output"));
  const Tensor gradWeight = cpu::winogradConv2dBackwardWeights(ones, ones, {1, 1, 3, 3}, params);
  EXPECT_TRUE(testing::allClose(
      gradWeight,
      Tensor::fromVector(std::vector<float>{9, 12, 9, 12, 16, 12, 9, 12, 9}, {1, 1, 3, 3}), 0.0,
      1e-4, "grad weight"));
  // The data gradient of ones through a kernel of ones is the same count as the forward.
  EXPECT_TRUE(testing::allClose(cpu::winogradConv2dBackwardData(ones, kernel, {1, 1, 4, 4}, params),
                                Tensor::fromVector(counts, {1, 1, 4, 4}), 0.0, 1e-5, "grad input"));
}

TEST(Winograd, AppliesOnlyToDenseStrideOne3x3) {
  const Shape kernel3x3{8, 8, 3, 3};
  EXPECT_TRUE(cpu::winogradApplies(kernel3x3, padded(1)));
  EXPECT_TRUE(cpu::winogradApplies(kernel3x3, padded(2)));
  EXPECT_FALSE(cpu::winogradApplies(kernel3x3, padded(3)));  // the data gradient's padding < 0
  EXPECT_FALSE(cpu::winogradApplies({8, 8, 5, 5}, padded(1)));
  EXPECT_FALSE(cpu::winogradApplies({8, 8, 1, 1}, padded(0)));
  Conv2dParams strided = padded(1);
  strided.stride = {2, 2};
  EXPECT_FALSE(cpu::winogradApplies(kernel3x3, strided));
  Conv2dParams dilated = padded(1);
  dilated.dilation = {2, 2};
  EXPECT_FALSE(cpu::winogradApplies(kernel3x3, dilated));
  Conv2dParams grouped = padded(1);
  grouped.groups = 2;
  EXPECT_FALSE(cpu::winogradApplies({8, 4, 3, 3}, grouped));
  Conv2dParams uneven = padded(1);
  uneven.padding = {1, 0};
  EXPECT_FALSE(cpu::winogradApplies(kernel3x3, uneven));
}

// conv2d's default runs Winograd from 64 input and output channels on (where it was measured
// faster, bench/conv_algorithms.cpp) and oneDNN's direct kernels below: its results equal, bit
// for bit, those of the algorithm forced.
TEST(Winograd, Conv2dRunsItFrom64ChannelsAnd64OutputTilesOn) {
  const cpu::ConvAlgorithm previous = cpu::convAlgorithm();
  auto forwardWith = [](cpu::ConvAlgorithm algorithm, const Tensor& x, const Tensor& w) {
    cpu::setConvAlgorithm(algorithm);
    return cpu::conv2dForward(x, w, Tensor(), padded(1)).toVector();
  };
  // An 8x8 output is 2x2 tiles: batch 16 makes 64 tiles, batch 15 makes 60.
  for (int64_t channels : {32, 64}) {
    for (int64_t batch : {15, 16}) {
      const Tensor x = randomTensor({batch, channels, 8, 8}, 21);
      const Tensor w = randomTensor({channels, channels, 3, 3}, 22);
      const auto automatic = forwardWith(cpu::ConvAlgorithm::Auto, x, w);
      const auto winograd = forwardWith(cpu::ConvAlgorithm::Winograd, x, w);
      const auto direct = forwardWith(cpu::ConvAlgorithm::Direct, x, w);
      EXPECT_NE(winograd, direct) << "the two algorithms round differently";
      EXPECT_EQ(automatic, channels >= 64 && batch >= 16 ? winograd : direct)
          << channels << " channels, batch " << batch;
    }
  }
  cpu::setConvAlgorithm(previous);
}

}  // namespace
}  // namespace imerge
