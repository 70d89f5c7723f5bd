// The CUDA pooling, LRN and dropout kernels against the CPU kernels on the same random inputs,
// forward and backward: 1e-4 relative, max-pooling indices exact. Shapes are the models' (ResNet's
// 3x3 s2 p1 max pool, VGG's 2x2 s2, AlexNet's 3x3 s2 and LRN 5, global and adaptive average
// pooling) and the edge cases of tests/core/cuda_kernel_math_test.cpp, which checks the same
// arithmetic on the host. Needs a GPU: each test skips, saying why, where there is none.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "autograd/autograd.h"
#include "core/cpu/lrn.h"
#include "core/cpu/pooling.h"
#include "core/cuda/cuda_device.h"
#include "core/cuda/dropout.h"
#include "core/cuda/dropout_hash.h"
#include "core/cuda/elementwise.h"
#include "core/cuda/lrn.h"
#include "core/cuda/pooling.h"
#include "core/random.h"
#include "support/error_text.h"
#include "support/gpu_test.h"
#include "support/gradcheck.h"
#include "support/pool_cases.h"

namespace imerge {
namespace {

using testing::describe;
using testing::expectClose;
using testing::PoolCase;
using testing::randomTensor;

std::vector<int32_t> indicesOf(const Tensor& workspace) {
  const Tensor host = workspace.to(cpuDevice());
  const int32_t* data = host.data<int32_t>();
  return std::vector<int32_t>(data, data + host.numel());
}

// The models' shapes at their sizes, then the edge cases the host replay checks too.
std::vector<PoolCase> poolCases() {
  std::vector<PoolCase> cases = {
      {{2, 16, 56, 56}, {{3, 3}, {2, 2}, {1, 1}, false}},  // ResNet's stem
      {{2, 16, 28, 28}, {{2, 2}, {2, 2}, {0, 0}, false}},  // VGG
      {{2, 16, 55, 55}, {{3, 3}, {2, 2}, {0, 0}, false}},  // AlexNet
      {{2, 8, 27, 27}, {{3, 3}, {2, 2}, {0, 0}, true}},
  };
  for (const PoolCase& c : testing::poolEdgeCases()) cases.push_back(c);
  return cases;
}

void checkMaxPool(const PoolCase& c, const Tensor& input, uint64_t seed) {
  CudaDevice& gpu = cudaDevice();
  const cpu::MaxPool2dResult reference = cpu::maxPool2dForward(input, c.params, true);
  const cuda::MaxPool2dResult result = cuda::maxPool2dForward(input.to(gpu), c.params, true);
  expectClose(result.output, reference.output, "max forward " + describe(c));
  EXPECT_EQ(indicesOf(result.workspace), indicesOf(reference.workspace))
      << "argmax of " << describe(c);
  // Inference: the same output, no workspace.
  const cuda::MaxPool2dResult inference = cuda::maxPool2dForward(input.to(gpu), c.params, false);
  EXPECT_FALSE(inference.workspace.defined());
  expectClose(inference.output, reference.output, "max forward (no workspace) " + describe(c));
  const Tensor gradOutput = randomTensor(reference.output.shape(), seed);
  expectClose(cuda::maxPool2dBackward(gradOutput.to(gpu), result.workspace, c.input, c.params),
              cpu::maxPool2dBackward(gradOutput, reference.workspace, c.input, c.params),
              "max backward " + describe(c));
}

TEST(CudaPooling, MaxPoolMatchesTheCpu) {
  SKIP_WITHOUT_GPU();
  uint64_t seed = 1;
  for (const PoolCase& c : poolCases()) {
    checkMaxPool(c, randomTensor(c.input, seed), seed + 1);
    seed += 2;
  }
}

// Ties (values from {0, 1, 2}) pick the CPU's winner, so the gradient goes to the same element.
TEST(CudaPooling, MaxPoolTiesPickTheCpusWinner) {
  SKIP_WITHOUT_GPU();
  uint64_t seed = 100;
  for (const PoolCase& c : poolCases()) {
    Tensor ties = randomTensor(c.input, seed, 0.0f, 3.0f);
    float* values = ties.data<float>();
    for (int64_t i = 0; i < ties.numel(); ++i) values[i] = std::floor(values[i]);
    checkMaxPool(c, ties, seed + 1);
    seed += 2;
  }
}

TEST(CudaPooling, MaxPoolNanWinsAsOnTheCpu) {
  SKIP_WITHOUT_GPU();
  const PoolCase c = {{1, 1, 6, 6}, {{3, 3}, {2, 2}, {1, 1}, false}};
  Tensor input = randomTensor(c.input, 150);
  input.data<float>()[7] = std::nanf("");
  input.data<float>()[8] = std::nanf("");
  const cpu::MaxPool2dResult reference = cpu::maxPool2dForward(input, c.params, true);
  const cuda::MaxPool2dResult result =
      cuda::maxPool2dForward(input.to(cudaDevice()), c.params, true);
  EXPECT_EQ(indicesOf(result.workspace), indicesOf(reference.workspace));
  const std::vector<float> gpu = result.output.toVector(), cpu = reference.output.toVector();
  for (size_t i = 0; i < gpu.size(); ++i) {
    EXPECT_EQ(std::isnan(gpu[i]), std::isnan(cpu[i])) << "element " << i;
    if (!std::isnan(cpu[i])) {
      EXPECT_EQ(gpu[i], cpu[i]) << "element " << i;
    }
  }
}

TEST(CudaPooling, AvgPoolMatchesTheCpuBothWaysOfCountingPadding) {
  SKIP_WITHOUT_GPU();
  CudaDevice& gpu = cudaDevice();
  uint64_t seed = 200;
  for (const PoolCase& c : poolCases()) {
    for (bool countIncludePad : {true, false}) {
      const std::string what = describe(c) + (countIncludePad ? " include pad" : " exclude pad");
      const Tensor input = randomTensor(c.input, seed++);
      const Tensor reference = cpu::avgPool2dForward(input, c.params, countIncludePad);
      expectClose(cuda::avgPool2dForward(input.to(gpu), c.params, countIncludePad), reference,
                  "avg forward " + what);
      const Tensor gradOutput = randomTensor(reference.shape(), seed++);
      expectClose(cuda::avgPool2dBackward(gradOutput.to(gpu), c.input, c.params, countIncludePad),
                  cpu::avgPool2dBackward(gradOutput, c.input, c.params, countIncludePad),
                  "avg backward " + what);
    }
  }
}

TEST(CudaPooling, AdaptiveAvgPoolMatchesTheCpu) {
  SKIP_WITHOUT_GPU();
  CudaDevice& gpu = cudaDevice();
  struct AdaptiveCase {
    Shape input;
    std::array<int64_t, 2> output;
  };
  const std::vector<AdaptiveCase> cases = {
      {{4, 64, 7, 7}, {1, 1}},    // ResNet's global average
      {{2, 16, 13, 13}, {6, 6}},  // AlexNet's
      {{2, 16, 9, 9}, {7, 7}},    // VGG's head from a smaller map
      {{2, 16, 14, 14}, {7, 7}},  // divisible
      {{2, 16, 6, 6}, {6, 6}},    // identity windows
      {{1, 4, 5, 3}, {7, 6}},     // output larger than input
      {{1, 4, 10, 11}, {3, 4}},   // non-divisible, non-square
  };
  uint64_t seed = 300;
  for (const AdaptiveCase& c : cases) {
    const std::string what = shapeToString(c.input) + " -> " + std::to_string(c.output[0]) + "x" +
                             std::to_string(c.output[1]);
    const Tensor input = randomTensor(c.input, seed++);
    const Tensor reference = cpu::adaptiveAvgPool2dForward(input, c.output);
    expectClose(cuda::adaptiveAvgPool2dForward(input.to(gpu), c.output), reference,
                "adaptive forward " + what);
    const Tensor gradOutput = randomTensor(reference.shape(), seed++);
    expectClose(cuda::adaptiveAvgPool2dBackward(gradOutput.to(gpu), c.input),
                cpu::adaptiveAvgPool2dBackward(gradOutput, c.input), "adaptive backward " + what);
  }
}

// Both devices refuse the same options with the same words.
TEST(CudaPooling, RefusesWhatTheCpuRefuses) {
  SKIP_WITHOUT_GPU();
  const Tensor input = Tensor::zeros({1, 1, 5, 5}, DType::Float32, cudaDevice());
  testing::expectContains(testing::errorMessage([&] {
                            cuda::maxPool2dForward(input, {{3, 3}, {1, 1}, {2, 2}, false}, true);
                          }),
                          "maxPool2d: padding 2x2 must be at most half of kernel 3x3");
  testing::expectContains(testing::errorMessage([&] {
                            cuda::avgPool2dForward(input, {{7, 7}, {1, 1}, {0, 0}, false}, true);
                          }),
                          "avgPool2d: kernel 7x7 larger than padded input 5x5");
  testing::expectContains(testing::errorMessage([&] {
                            cuda::adaptiveAvgPool2dForward(input, {0, 2});
                          }),
                          "adaptiveAvgPool2d: output size 0x2 must be positive");
  const cuda::MaxPool2dResult noWorkspace =
      cuda::maxPool2dForward(input, {{2, 2}, {2, 2}, {0, 0}, false}, false);
  testing::expectContains(testing::errorMessage([&] {
                            cuda::maxPool2dBackward(noWorkspace.output, noWorkspace.workspace,
                                                    input.shape(), {{2, 2}, {2, 2}, {0, 0}, false});
                          }),
                          "run the forward with keepWorkspace");
}

// ---- LRN --------------------------------------------------------------------------------------

struct LrnCase {
  Shape shape;
  cpu::LrnParams params;
};

std::string describe(const LrnCase& c) {
  return shapeToString(c.shape) + " size " + std::to_string(c.params.size) + " alpha " +
         std::to_string(c.params.alpha) + " beta " + std::to_string(c.params.beta) + " k " +
         std::to_string(c.params.k);
}

// Odd sizes within cuDNN's limits take cuDNN's path, the rest the own kernel: sizes 1 to 6, one
// beyond cuDNN's 16, one wider than the channels, and a k below cuDNN's minimum.
TEST(CudaLrn, MatchesTheCpuOnBothPaths) {
  SKIP_WITHOUT_GPU();
  CudaDevice& gpu = cudaDevice();
  std::vector<LrnCase> cases = {
      {{2, 96, 27, 27}, {5, 1e-4f, 0.75f, 2.0f}},  // AlexNet
      {{2, 16, 8, 8}, {4, 1e-4f, 0.75f, 1.0f}},    // PyTorch's defaults, even
      {{2, 20, 5, 5}, {17, 0.5f, 0.75f, 1.0f}},    // odd, beyond cuDNN's 16
      {{2, 7, 5, 5}, {9, 0.3f, 0.6f, 1.0f}},       // wider than the channels
      {{2, 7, 5, 5}, {3, 0.3f, 0.6f, 1e-6f}},      // k below cuDNN's minimum
  };
  for (int64_t size = 1; size <= 6; ++size)
    cases.push_back({{2, 7, 6, 5}, {size, 0.5f, 0.75f, 2.0f}});
  uint64_t seed = 400;
  for (const LrnCase& c : cases) {
    const Tensor input = randomTensor(c.shape, seed++, -2.0f, 2.0f);
    const cpu::LrnResult reference = cpu::lrnForward(input, c.params, true);
    const Tensor onGpu = input.to(gpu);
    const cuda::LrnResult result = cuda::lrnForward(onGpu, c.params, true);
    expectClose(result.output, reference.output, "lrn forward " + describe(c));
    expectClose(cuda::lrnForward(onGpu, c.params, false).output, reference.output,
                "lrn forward (no workspace) " + describe(c));
    const Tensor gradOutput = randomTensor(c.shape, seed++);
    expectClose(cuda::lrnBackward(gradOutput.to(gpu), onGpu, result.workspace, c.params),
                cpu::lrnBackward(gradOutput, input, reference.workspace, c.params),
                "lrn backward " + describe(c));
  }
}

// ---- dropout ----------------------------------------------------------------------------------

TEST(CudaDropout, DropsAFractionPAndScalesTheSurvivors) {
  SKIP_WITHOUT_GPU();
  CudaDevice& gpu = cudaDevice();
  const Shape shape = {1000, 1001};
  for (float p : {0.1f, 0.5f, 0.9f}) {
    Generator generator(11);
    const std::vector<float> mask = cuda::dropoutMask(shape, p, generator, gpu).toVector();
    int64_t zeros = 0;
    for (float value : mask) {
      if (value == 0.0f) {
        ++zeros;
      } else {
        ASSERT_EQ(value, 1.0f / (1.0f - p));
      }
    }
    const double n = static_cast<double>(mask.size());
    EXPECT_NEAR(zeros / n, p, 5.0 * std::sqrt(p * (1.0 - p) / n)) << "p = " << p;
  }
  Generator generator(12);
  for (float value : cuda::dropoutMask({999}, 0.0f, generator, gpu).toVector()) {
    ASSERT_EQ(value, 1.0f);
  }
  for (float value : cuda::dropoutMask({999}, 1.0f, generator, gpu).toVector()) {
    ASSERT_EQ(value, 0.0f);
  }
}

// The kernel's mask is the hash's, seeded by one 64-bit draw from the generator; the same seed
// gives the same mask, the generator's next draw another.
TEST(CudaDropout, SameSeedSameMaskAndTheHashsValues) {
  SKIP_WITHOUT_GPU();
  CudaDevice& gpu = cudaDevice();
  const Shape shape = {3, 5, 7, 11};  // 1155 elements: not a multiple of four
  const float p = 0.3f;
  Generator first(5), second(5), seeds(5);
  const std::vector<float> mask = cuda::dropoutMask(shape, p, first, gpu).toVector();
  EXPECT_EQ(mask, cuda::dropoutMask(shape, p, second, gpu).toVector());
  EXPECT_NE(mask, cuda::dropoutMask(shape, p, first, gpu).toVector());
  const uint64_t seed = seeds.nextInt(std::numeric_limits<uint64_t>::max());
  for (size_t i = 0; i < mask.size(); ++i) {
    ASSERT_EQ(mask[i], cuda::dropout::maskValue(cuda::dropout::dropoutUniform(seed, i), p,
                                                cuda::dropout::survivorScale(p)))
        << "element " << i;
  }
}

// Forward and backward multiply by one mask: through autograd, the gradient is zero exactly
// where the output was dropped, and gradOutput / (1 - p) elsewhere.
// The forward and the backward apply one mask: the one cuda::dropoutMask draws from the same
// generator state (one seed per call, core/cuda/dropout.h), holding 0 for a fraction near p of
// the elements and 1 / (1 - p) for the rest. A backward that drew a mask of its own, an
// identity, or a mask without the scale each fail it.
TEST(CudaDropout, TheBackwardUsesTheForwardsMask) {
  SKIP_WITHOUT_GPU();
  CudaDevice& gpu = cudaDevice();
  const float p = 0.4f;
  const Tensor input = randomTensor({64, 129}, 20, 0.5f, 1.5f);  // no zeros of its own
  autograd::Variable x(input.to(gpu), true);
  Generator generator(21), sameState(21);
  autograd::Variable y = autograd::dropout(x, p, true, generator);
  const Tensor gradOutput = randomTensor({64, 129}, 22);
  y.backward(gradOutput.to(gpu));
  const std::vector<float> mask = cuda::dropoutMask({64, 129}, p, sameState, gpu).toVector();
  const std::vector<float> out = y.tensor().toVector(), grad = x.grad().toVector();
  const std::vector<float> x0 = input.toVector(), dy = gradOutput.toVector();
  size_t dropped = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    ASSERT_TRUE(mask[i] == 0.0f || mask[i] == 1.0f / (1.0f - p)) << "mask element " << i;
    dropped += mask[i] == 0.0f;
    ASSERT_EQ(out[i], x0[i] * mask[i]) << "forward element " << i;
    ASSERT_EQ(grad[i], dy[i] * mask[i]) << "backward element " << i;
  }
  // 8256 draws with p = 0.4: 3302 expected, standard deviation 45.
  EXPECT_NEAR(static_cast<double>(dropped), p * out.size(), 250) << "dropped of " << out.size();
}

}  // namespace
}  // namespace imerge
