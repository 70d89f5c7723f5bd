// The per-element arithmetic of the own CUDA kernels (core/cuda/pooling_math.h, lrn_math.h,
// dropout_hash.h), compiled here by the host compiler and run over every element of varied
// shapes against the CPU kernels. The .cu files only decompose a flat index (core/cuda/
// flat_index.h) and call these functions, so this checks the CUDA kernels' indexing and
// arithmetic on a machine without a GPU; tests/cuda/pooling_lrn_dropout_test.cpp runs the
// kernels themselves where there is one.
//
// The loops below visit indices as the kernels' grid-stride loops do and decompose them with
// the kernels' own positionOf, on the geometry and output shape the kernels' host side builds.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/cpu/lrn.h"
#include "core/cpu/pooling.h"
#include "core/cuda/dropout_hash.h"
#include "core/cuda/flat_index.h"
#include "core/cuda/lrn_math.h"
#include "core/cuda/pooling_math.h"
#include "support/compare.h"
#include "support/gradcheck.h"
#include "support/pool_cases.h"

namespace imerge {
namespace {

using cuda::pooling::PoolGeometry;
using testing::describe;
using testing::expectClose;
using testing::PoolCase;
using testing::randomTensor;

// Bit-for-bit equal, NaN included.
void expectIdentical(const std::vector<float>& actual, const Tensor& expected,
                     const std::string& what) {
  const std::vector<float> reference = expected.toVector();
  ASSERT_EQ(actual.size(), reference.size()) << what;
  for (size_t i = 0; i < actual.size(); ++i) {
    ASSERT_EQ(std::memcmp(&actual[i], &reference[i], sizeof(float)), 0)
        << what << ": element " << i << " is " << actual[i] << ", the CPU's " << reference[i];
  }
}

// ---- pooling ----------------------------------------------------------------------------------

// The models' shapes in small sizes, the edge cases the GPU test runs too, and two more: a
// window reaching into the padding on both sides of a 2 x 3 plane, one window covering the
// whole plane.
std::vector<PoolCase> poolCases() {
  std::vector<PoolCase> cases = {
      {{2, 3, 12, 12}, {{3, 3}, {2, 2}, {1, 1}, false}},  // ResNet's stem max pool
      {{2, 3, 11, 11}, {{3, 3}, {2, 2}, {1, 1}, false}},
      {{2, 2, 8, 8}, {{2, 2}, {2, 2}, {0, 0}, false}},    // VGG
      {{1, 2, 13, 13}, {{3, 3}, {2, 2}, {0, 0}, false}},  // AlexNet
  };
  for (const PoolCase& c : testing::poolEdgeCases()) cases.push_back(c);
  cases.push_back({{1, 1, 2, 3}, {{2, 2}, {2, 2}, {1, 1}, true}});
  cases.push_back({{1, 3, 4, 4}, {{4, 4}, {4, 4}, {0, 0}, false}});
  return cases;
}

struct MaxResult {
  std::vector<float> output;
  std::vector<int32_t> argmax;
};

// maxPoolForwardKernel's loop, on the host.
MaxResult maxPoolForward(const Tensor& input, const Shape& outputShape, const PoolGeometry& g) {
  const int64_t planes = outputShape[0] * outputShape[1];
  const int64_t outputPlane = g.outHeight * g.outWidth;
  MaxResult result{std::vector<float>(planes * outputPlane),
                   std::vector<int32_t>(planes * outputPlane)};
  const float* x = input.data<float>();
  for (int64_t i = 0; i < planes * outputPlane; ++i) {
    const auto [plane, oh, ow] = cuda::positionOf(i, g.outHeight, g.outWidth);
    const auto winner = cuda::pooling::maxPoolOutput(x + plane * g.height * g.width, g, oh, ow);
    result.output[i] = winner.value;
    result.argmax[i] = winner.index;
  }
  return result;
}

// maxPoolBackwardKernel's loop.
std::vector<float> maxPoolBackward(const Tensor& gradOutput, const std::vector<int32_t>& argmax,
                                   const Shape& inputShape, const PoolGeometry& g) {
  const int64_t planes = inputShape[0] * inputShape[1];
  const int64_t inputPlane = g.height * g.width, outputPlane = g.outHeight * g.outWidth;
  std::vector<float> gradInput(planes * inputPlane);
  const float* dy = gradOutput.data<float>();
  for (int64_t i = 0; i < planes * inputPlane; ++i) {
    const auto [plane, h, w] = cuda::positionOf(i, g.height, g.width);
    gradInput[i] = cuda::pooling::maxPoolGradInput(dy + plane * outputPlane,
                                                   argmax.data() + plane * outputPlane, g, h, w);
  }
  return gradInput;
}

// avgPoolForwardKernel's loop.
std::vector<float> avgPoolForward(const Tensor& input, const Shape& outputShape,
                                  const PoolGeometry& g, bool countIncludePad, bool adaptive) {
  const int64_t planes = outputShape[0] * outputShape[1];
  const int64_t outputPlane = g.outHeight * g.outWidth;
  std::vector<float> output(planes * outputPlane);
  const float* x = input.data<float>();
  for (int64_t i = 0; i < planes * outputPlane; ++i) {
    const auto [plane, oh, ow] = cuda::positionOf(i, g.outHeight, g.outWidth);
    const float* inputPlane = x + plane * g.height * g.width;
    output[i] = adaptive ? cuda::pooling::adaptiveAvgPoolOutput(inputPlane, g, oh, ow)
                         : cuda::pooling::avgPoolOutput(inputPlane, g, countIncludePad, oh, ow);
  }
  return output;
}

// avgPoolBackwardKernel's loop.
std::vector<float> avgPoolBackward(const Tensor& gradOutput, const Shape& inputShape,
                                   const PoolGeometry& g, bool countIncludePad, bool adaptive) {
  const int64_t planes = inputShape[0] * inputShape[1];
  const int64_t inputPlane = g.height * g.width;
  std::vector<float> gradInput(planes * inputPlane);
  const float* dy = gradOutput.data<float>();
  for (int64_t i = 0; i < planes * inputPlane; ++i) {
    const auto [plane, h, w] = cuda::positionOf(i, g.height, g.width);
    const float* gradPlane = dy + plane * g.outHeight * g.outWidth;
    gradInput[i] = adaptive ? cuda::pooling::adaptiveAvgPoolGradInput(gradPlane, g, h, w)
                            : cuda::pooling::avgPoolGradInput(gradPlane, g, countIncludePad, h, w);
  }
  return gradInput;
}

// The output shape the CUDA kernels' host side computes.
Shape pooledShapeOf(const PoolCase& c) {
  return cpu::pooledShape("test", c.input, c.params);
}

// The gather ranges name exactly the windows that hold each input row, brute force over many
// geometries (including every window being non-empty, which the max relies on).
TEST(CudaPoolingMath, GatherRangesAreExactlyTheWindowsHoldingARow) {
  int64_t asymmetric = 0;  // geometries with paddingEnd != padding: the loop must reach some
  for (int64_t input = 1; input <= 11; ++input) {
    for (int64_t kernel = 1; kernel <= 5; ++kernel) {
      for (int64_t stride = 1; stride <= 4; ++stride) {
        for (int64_t padding = 0; 2 * padding <= kernel; ++padding) {
          for (int64_t paddingEnd = 0; 2 * paddingEnd <= kernel; ++paddingEnd) {
            if (kernel > input + padding + paddingEnd) continue;
            if (paddingEnd != padding) ++asymmetric;
            for (bool ceil : {false, true}) {
              const int64_t outputs =
                  cpu::pooledSize(input, kernel, stride, padding, paddingEnd, ceil);
              for (int64_t o = 0; o < outputs; ++o) {
                const auto window = cuda::pooling::strideWindow(o, input, kernel, stride, padding,
                                                                paddingEnd, false);
                ASSERT_LT(window.start, window.end) << "empty window " << o;
              }
              for (int64_t h = 0; h < input; ++h) {
                const auto range =
                    cuda::pooling::stridedOutputsContaining(h, outputs, kernel, stride, padding);
                for (int64_t o = 0; o < outputs; ++o) {
                  const auto window = cuda::pooling::strideWindow(o, input, kernel, stride, padding,
                                                                  paddingEnd, false);
                  const bool holds = window.start <= h && h < window.end;
                  const bool named = range.first <= o && o <= range.last;
                  ASSERT_EQ(holds, named)
                      << "input " << input << " kernel " << kernel << " stride " << stride
                      << " padding " << padding << " end " << paddingEnd << " ceil " << ceil
                      << ": row " << h << ", window " << o;
                }
              }
            }
          }
        }
      }
    }
  }
  EXPECT_GT(asymmetric, 100);
  for (int64_t input = 1; input <= 20; ++input) {
    for (int64_t outputs = 1; outputs <= 20; ++outputs) {
      for (int64_t h = 0; h < input; ++h) {
        const auto range = cuda::pooling::adaptiveOutputsContaining(h, input, outputs);
        for (int64_t o = 0; o < outputs; ++o) {
          const auto window = cuda::pooling::adaptiveWindow(o, input, outputs);
          ASSERT_LT(window.start, window.end);
          const bool holds = window.start <= h && h < window.end;
          const bool named = range.first <= o && o <= range.last;
          ASSERT_EQ(holds, named) << "adaptive " << input << " -> " << outputs << ": row " << h
                                  << ", window " << o;
        }
      }
    }
  }
}

void checkMaxPool(const PoolCase& c, const Tensor& input, uint64_t seed) {
  const cpu::MaxPool2dResult reference = cpu::maxPool2dForward(input, c.params, true);
  const Shape outputShape = pooledShapeOf(c);
  ASSERT_EQ(outputShape, reference.output.shape()) << describe(c);
  const PoolGeometry g = cuda::pooling::stridedGeometry(c.input, outputShape, c.params);
  const MaxResult result = maxPoolForward(input, outputShape, g);
  expectIdentical(result.output, reference.output, "max forward " + describe(c));
  const int32_t* indices = reference.workspace.data<int32_t>();
  for (size_t i = 0; i < result.argmax.size(); ++i) {
    ASSERT_EQ(result.argmax[i], indices[i]) << "argmax " << i << " of " << describe(c);
  }
  const Tensor gradOutput = randomTensor(outputShape, seed);
  expectIdentical(maxPoolBackward(gradOutput, result.argmax, c.input, g),
                  cpu::maxPool2dBackward(gradOutput, reference.workspace, c.input, c.params),
                  "max backward " + describe(c));
}

TEST(CudaPoolingMath, MaxPoolMatchesTheCpuExactly) {
  uint64_t seed = 1;
  for (const PoolCase& c : poolCases()) {
    checkMaxPool(c, randomTensor(c.input, seed), seed + 1);
    seed += 2;
  }
}

// Ties everywhere (values from {0, 1, 2}) and NaNs: the winners are the CPU's (first maximum in
// row-major order; a NaN wins whenever it is seen).
TEST(CudaPoolingMath, MaxPoolTiesAndNansPickTheCpusWinner) {
  uint64_t seed = 100;
  for (const PoolCase& c : poolCases()) {
    Tensor ties = randomTensor(c.input, seed, 0.0f, 3.0f);
    ++seed;
    float* values = ties.data<float>();
    for (int64_t i = 0; i < ties.numel(); ++i) values[i] = std::floor(values[i]);
    checkMaxPool(c, ties, seed);
    Tensor nans = ties.clone();
    float* withNans = nans.data<float>();
    for (int64_t i = 0; i < nans.numel(); i += 5) withNans[i] = std::nanf("");
    if (nans.numel() > 3) withNans[3] = -std::numeric_limits<float>::infinity();
    checkMaxPool(c, nans, seed);
  }
}

TEST(CudaPoolingMath, AvgPoolMatchesTheCpuBothWaysOfCountingPadding) {
  uint64_t seed = 200;
  for (const PoolCase& c : poolCases()) {
    for (bool countIncludePad : {true, false}) {
      const std::string what = describe(c) + (countIncludePad ? " include pad" : " exclude pad");
      const Tensor input = randomTensor(c.input, seed++);
      const Tensor reference = cpu::avgPool2dForward(input, c.params, countIncludePad);
      const Shape outputShape = pooledShapeOf(c);
      ASSERT_EQ(outputShape, reference.shape()) << what;
      const PoolGeometry g = cuda::pooling::stridedGeometry(c.input, outputShape, c.params);
      expectClose(avgPoolForward(input, outputShape, g, countIncludePad, false), reference,
                  "avg forward " + what, 1e-6f);
      const Tensor gradOutput = randomTensor(outputShape, seed++);
      expectClose(avgPoolBackward(gradOutput, c.input, g, countIncludePad, false),
                  cpu::avgPool2dBackward(gradOutput, c.input, c.params, countIncludePad),
                  "avg backward " + what, 1e-6f);
    }
  }
}

TEST(CudaPoolingMath, AdaptiveAvgPoolMatchesTheCpu) {
  struct AdaptiveCase {
    Shape input;
    std::array<int64_t, 2> output;
  };
  const std::vector<AdaptiveCase> cases = {
      {{2, 3, 7, 7}, {1, 1}},    // global (ResNet's head)
      {{2, 3, 13, 13}, {6, 6}},  // AlexNet's, non-divisible
      {{1, 2, 9, 9}, {7, 7}},    // VGG's from a smaller map
      {{1, 2, 14, 14}, {7, 7}},  // divisible
      {{1, 2, 5, 3}, {7, 4}},    // output larger than input
      {{1, 1, 10, 11}, {3, 4}},  // non-divisible, non-square
      {{1, 1, 1, 1}, {2, 3}},
  };
  uint64_t seed = 300;
  for (const AdaptiveCase& c : cases) {
    const std::string what = shapeToString(c.input) + " -> " + std::to_string(c.output[0]) + "x" +
                             std::to_string(c.output[1]);
    const Tensor input = randomTensor(c.input, seed++);
    const Tensor reference = cpu::adaptiveAvgPool2dForward(input, c.output);
    const Shape outputShape = {c.input[0], c.input[1], c.output[0], c.output[1]};
    const PoolGeometry g = cuda::pooling::adaptiveGeometry(c.input, outputShape);
    expectClose(avgPoolForward(input, outputShape, g, false, true), reference,
                "adaptive forward " + what, 1e-6f);
    const Tensor gradOutput = randomTensor(outputShape, seed++);
    expectClose(avgPoolBackward(gradOutput, c.input, g, false, true),
                cpu::adaptiveAvgPool2dBackward(gradOutput, c.input), "adaptive backward " + what,
                1e-6f);
  }
}

// ---- LRN --------------------------------------------------------------------------------------

// lrnForwardKernel's loop: output and scale.
void lrnForward(const Tensor& input, const cuda::lrn::LrnCoefficients& lrn,
                std::vector<float>& output, std::vector<float>& scale) {
  const int64_t channels = input.dim(1), planeSize = input.dim(2) * input.dim(3);
  const int64_t imageSize = channels * planeSize;
  const float* x = input.data<float>();
  output.resize(input.numel());
  scale.resize(input.numel());
  for (int64_t i = 0; i < input.numel(); ++i) {
    const auto [image, c, p] = cuda::positionOf(i, channels, planeSize);
    scale[i] = cuda::lrn::lrnScale(x + image * imageSize, channels, planeSize, c, p, lrn);
    output[i] = cuda::lrn::lrnOutput(x[i], scale[i], lrn);
  }
}

// lrnThroughKernel's and lrnBackwardKernel's loops.
std::vector<float> lrnBackward(const Tensor& gradOutput, const Tensor& input,
                               const std::vector<float>& scale,
                               const cuda::lrn::LrnCoefficients& lrn) {
  const int64_t n = input.numel();
  const int64_t channels = input.dim(1), planeSize = input.dim(2) * input.dim(3);
  const int64_t imageSize = channels * planeSize;
  const float* x = input.data<float>();
  const float* dy = gradOutput.data<float>();
  std::vector<float> through(n), gradInput(n);
  for (int64_t i = 0; i < n; ++i) through[i] = cuda::lrn::lrnThrough(dy[i], x[i], scale[i], lrn);
  for (int64_t i = 0; i < n; ++i) {
    const auto [image, j, p] = cuda::positionOf(i, channels, planeSize);
    const int64_t offset = image * imageSize;
    gradInput[i] = cuda::lrn::lrnGradInput(dy + offset, x + offset, scale.data() + offset,
                                           through.data() + offset, channels, planeSize, j, p, lrn);
  }
  return gradInput;
}

// Every size from 1 to 6 (odd sizes run on oneDNN on the CPU, even ones on its own loop), one
// wider than the channels, and AlexNet's options; with large alpha so the window matters.
TEST(CudaLrnMath, MatchesTheCpuForEverySize) {
  struct LrnCase {
    int64_t size;
    float alpha, beta, k;
  };
  std::vector<LrnCase> cases;
  for (int64_t size = 1; size <= 6; ++size) cases.push_back({size, 0.5f, 0.75f, 2.0f});
  cases.push_back({9, 0.3f, 0.6f, 1.0f});
  cases.push_back({5, 1e-4f, 0.75f, 2.0f});  // AlexNet
  cases.push_back({4, 1e-4f, 0.75f, 1.0f});  // PyTorch's defaults, even
  const Shape shape = {2, 7, 3, 4};
  uint64_t seed = 400;
  for (const LrnCase& c : cases) {
    const std::string what = "size " + std::to_string(c.size) + " alpha " +
                             std::to_string(c.alpha) + " beta " + std::to_string(c.beta) + " k " +
                             std::to_string(c.k);
    const cpu::LrnParams params{c.size, c.alpha, c.beta, c.k};
    const auto lrn = cuda::lrn::coefficients(c.size, c.alpha, c.beta, c.k);
    const Tensor input = randomTensor(shape, seed++, -2.0f, 2.0f);
    const cpu::LrnResult reference = cpu::lrnForward(input, params, true);
    std::vector<float> output, scale;
    lrnForward(input, lrn, output, scale);
    expectClose(output, reference.output, "lrn forward " + what, 1e-6f);
    const Tensor gradOutput = randomTensor(shape, seed++);
    expectClose(lrnBackward(gradOutput, input, scale, lrn),
                cpu::lrnBackward(gradOutput, input, reference.workspace, params),
                "lrn backward " + what, 1e-6f);
  }
}

// ---- dropout hash -----------------------------------------------------------------------------

// The Random123 distribution's known-answer vectors for Philox4x32-10 (tests/kat_vectors):
// counter, key, result.
TEST(CudaDropoutHash, PhiloxMatchesTheKnownAnswers) {
  struct Vector {
    cuda::dropout::PhiloxBlock counter;
    uint32_t key0, key1;
    cuda::dropout::PhiloxBlock expected;
  };
  const std::vector<Vector> vectors = {
      {{{0, 0, 0, 0}}, 0, 0, {{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}}},
      {{{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}},
       0xffffffffu,
       0xffffffffu,
       {{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}}},
      {{{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}},
       0xa4093822u,
       0x299f31d0u,
       {{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}}},
  };
  for (const Vector& v : vectors) {
    const auto result = cuda::dropout::philox4x32_10(v.counter, v.key0, v.key1);
    for (int word = 0; word < 4; ++word) {
      EXPECT_EQ(result.word[word], v.expected.word[word]) << "word " << word;
    }
  }
}

// dropoutMaskKernel's loop: four elements per Philox block, the last block cut short.
std::vector<float> dropoutMask(int64_t n, uint64_t seed, float p) {
  std::vector<float> mask(n);
  const float scale = cuda::dropout::survivorScale(p);
  for (int64_t group = 0; group < (n + 3) / 4; ++group) {
    const auto bits = cuda::dropout::dropoutBits(seed, static_cast<uint64_t>(group));
    for (int word = 0; word < 4 && group * 4 + word < n; ++word) {
      mask[group * 4 + word] =
          cuda::dropout::maskValue(cuda::dropout::uniformFromBits(bits.word[word]), p, scale);
    }
  }
  return mask;
}

TEST(CudaDropoutHash, DropsAFractionPAndScalesTheSurvivors) {
  const int64_t n = 1000003;  // not a multiple of four
  for (float p : {0.1f, 0.5f, 0.9f}) {
    const std::vector<float> mask = dropoutMask(n, 0x1234567890abcdefull, p);
    int64_t zeros = 0;
    for (int64_t i = 0; i < n; ++i) {
      if (mask[i] == 0.0f) {
        ++zeros;
      } else {
        ASSERT_EQ(mask[i], 1.0f / (1.0f - p)) << "element " << i;
      }
      // The block loop and the per-element draw agree.
      if (i % 9973 == 0 || i >= n - 4) {
        ASSERT_EQ(mask[i],
                  cuda::dropout::maskValue(cuda::dropout::dropoutUniform(0x1234567890abcdefull, i),
                                           p, cuda::dropout::survivorScale(p)));
      }
    }
    const double fraction = static_cast<double>(zeros) / n;
    const double sigma = std::sqrt(p * (1.0 - p) / n);
    EXPECT_NEAR(fraction, p, 5.0 * sigma) << "p = " << p;
  }
  for (float value : dropoutMask(1001, 7, 0.0f)) ASSERT_EQ(value, 1.0f);
  for (float value : dropoutMask(1001, 7, 1.0f)) ASSERT_EQ(value, 0.0f);
}

TEST(CudaDropoutHash, SameSeedSameMaskOtherSeedOtherMask) {
  const int64_t n = 1 << 20;
  const float p = 0.5f;
  const std::vector<float> first = dropoutMask(n, 42, p);
  EXPECT_EQ(first, dropoutMask(n, 42, p));
  // Neighbouring seeds and seeds differing in the high word give independent masks: they
  // disagree on about 2 p (1 - p) of the elements.
  for (uint64_t other : {uint64_t{43}, uint64_t{42} + (uint64_t{1} << 32), ~uint64_t{42}}) {
    const std::vector<float> second = dropoutMask(n, other, p);
    int64_t differ = 0;
    for (int64_t i = 0; i < n; ++i) differ += first[i] != second[i];
    const double expected = 2.0 * p * (1.0 - p);
    const double sigma = std::sqrt(expected * (1.0 - expected) / n);
    EXPECT_NEAR(static_cast<double>(differ) / n, expected, 5.0 * sigma) << "seed " << other;
  }
}

// The uniform draws: mean 1/2, variance 1/12, and no correlation between an element and its
// neighbours (within a Philox block, across blocks, and the same word of the next block).
TEST(CudaDropoutHash, DrawsAreUniformAndNeighboursUncorrelated) {
  const int64_t n = 1000000;
  std::vector<double> u(n);
  for (int64_t i = 0; i < n; ++i) u[i] = cuda::dropout::dropoutUniform(987654321, i);
  double mean = 0.0;
  for (double v : u) mean += v;
  mean /= n;
  double variance = 0.0;
  for (double v : u) variance += (v - mean) * (v - mean);
  variance /= n;
  EXPECT_NEAR(mean, 0.5, 5.0 * std::sqrt(1.0 / 12.0 / n));
  EXPECT_NEAR(variance, 1.0 / 12.0, 1e-3);
  for (int64_t lag : {1, 2, 3, 4, 5, 8, 64}) {
    double covariance = 0.0;
    for (int64_t i = 0; i + lag < n; ++i) covariance += (u[i] - mean) * (u[i + lag] - mean);
    covariance /= (n - lag);
    const double correlation = covariance / variance;
    EXPECT_LT(std::fabs(correlation), 5.0 / std::sqrt(static_cast<double>(n))) << "lag " << lag;
  }
  // Every one of 16 equal bins of [0, 1) gets its share (a chi-square test, 15 degrees of
  // freedom; 40 is far beyond its 99.9th percentile of 37.7).
  std::vector<int64_t> bins(16, 0);
  for (double v : u) ++bins[static_cast<int>(v * 16)];
  double chiSquare = 0.0;
  for (int64_t count : bins) {
    const double expected = n / 16.0;
    chiSquare += (count - expected) * (count - expected) / expected;
  }
  EXPECT_LT(chiSquare, 40.0);
}

}  // namespace
}  // namespace imerge
