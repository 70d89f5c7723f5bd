// cuDNN convolution (core/cuda/convolution.h) against the CPU's (core/cpu/convolution.h) on the
// same random operands: every convolution shape the models use and the edge cases, forward and
// every gradient, in strict float32 and with TF32; the algorithm cache, the steady state's
// allocations, deterministic mode, the workspace limit and the error messages. Needs a GPU:
// each test skips, saying why, where there is none (ctest label "gpu").
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "core/cpu/convolution.h"
#include "core/cuda/convolution.h"
#include "core/cuda/cuda_device.h"
#include "core/gpu_policy/cuda_settings.h"
#include "support/error_text.h"
#include "support/gpu_test.h"
#include "support/gradcheck.h"

namespace imerge {
namespace {

using cpu::Conv2dGrads;
using cpu::Conv2dParams;
using testing::randomTensor;

// Strict float32: cuDNN and oneDNN sum the same products in different orders (and cuDNN may
// pick a transform algorithm: FFT, Winograd), which for these sizes stays far below 1e-4 of
// max(1, |value|).
constexpr float kStrictTolerance = 1e-4f;
// TF32 rounds both factors of every product to 10 mantissa bits: each product is off by at
// most 2 * 2^-10 of |a * b| even if the rounding truncates, so a direct sum of products is off
// by at most 2^-9 of the sum of |products| (float32 accumulation is covered by the strict term).
// The bound allows four times that, for transform algorithms (Winograd, FFT) whose rounding
// happens on transformed values a few times larger. It is a worst case: typical errors are
// about sqrt(terms) times smaller, and the strict test is the precise one.
constexpr float kTf32ProductError = 1.0f / 128.0f;

Tensor absolute(const Tensor& tensor) {
  std::vector<float> values = tensor.toVector();
  for (float& v : values) v = std::fabs(v);
  return Tensor::fromVector(values, tensor.shape());
}

// |gpu - cpu| <= strict * max(1, |cpu|) + productError * magnitude elementwise, where
// magnitude (same shape, optional) is the sum of |products| behind each value.
void expectClose(const Tensor& onGpu, const Tensor& onCpu, const char* what,
                 float strict = kStrictTolerance, const Tensor& magnitude = Tensor(),
                 float productError = 0.0f) {
  ASSERT_TRUE(onGpu.defined()) << what << " is undefined on the GPU";
  ASSERT_TRUE(onCpu.defined()) << what << " is undefined on the CPU";
  ASSERT_EQ(onGpu.shape(), onCpu.shape()) << what;
  EXPECT_EQ(onGpu.device().type(), DeviceType::CUDA) << what;
  const std::vector<float> gpu = onGpu.toVector(), cpu = onCpu.toVector();
  const std::vector<float> sums =
      magnitude.defined() ? magnitude.toVector() : std::vector<float>(cpu.size(), 0.0f);
  ASSERT_TRUE(testing::sameSizeAndFinite(gpu, cpu, what));
  for (size_t i = 0; i < gpu.size(); ++i) {
    const float bound = strict * std::max(1.0f, std::fabs(cpu[i])) + productError * sums[i];
    ASSERT_LE(std::fabs(gpu[i] - cpu[i]), bound)
        << what << " element " << i << " of " << onCpu.describe() << ": gpu " << gpu[i] << ", cpu "
        << cpu[i];
  }
}

struct ConvCase {
  const char* name;
  Shape input;  // [N, C_in, H, W]
  int64_t outChannels;
  std::array<int64_t, 2> kernel;
  Conv2dParams params;
  bool bias;

  Shape weightShape() const {
    return {outChannels, input[1] / params.groups, kernel[0], kernel[1]};
  }
};

Conv2dParams convParams(std::array<int64_t, 2> stride, std::array<int64_t, 2> padding,
                        std::array<int64_t, 2> dilation = {1, 1}, int64_t groups = 1) {
  Conv2dParams params;
  params.stride = stride;
  params.padding = padding;
  params.dilation = dilation;
  params.groups = groups;
  return params;
}

// Every convolution of the models (AlexNet, VGG, ResNet with both stems, the Fashion-MNIST
// nets) in small sizes, and the edge cases of the parameters.
std::vector<ConvCase> convCases() {
  return {
      {"3x3 pad 1 (VGG, ResNet)", {2, 8, 12, 12}, 16, {3, 3}, convParams({1, 1}, {1, 1}), true},
      {"3x3 stride 2 pad 1 (ResNet)",
       {2, 8, 12, 12},
       16,
       {3, 3},
       convParams({2, 2}, {1, 1}),
       false},
      {"1x1 (ResNet bottleneck)", {2, 16, 7, 7}, 8, {1, 1}, convParams({1, 1}, {0, 0}), false},
      {"1x1 stride 2 (ResNet downsample)",
       {2, 16, 14, 14},
       32,
       {1, 1},
       convParams({2, 2}, {0, 0}),
       false},
      {"7x7 stride 2 pad 3 on 3 channels (ResNet stem)",
       {2, 3, 32, 32},
       8,
       {7, 7},
       convParams({2, 2}, {3, 3}),
       false},
      {"11x11 stride 4 pad 2 (AlexNet conv1)",
       {2, 3, 67, 67},
       8,
       {11, 11},
       convParams({4, 4}, {2, 2}),
       true},
      {"5x5 pad 2 (AlexNet conv2)", {2, 8, 13, 13}, 12, {5, 5}, convParams({1, 1}, {2, 2}), true},
      {"3x3 pad 1 on 1 channel (Fashion-MNIST)",
       {4, 1, 28, 28},
       8,
       {3, 3},
       convParams({1, 1}, {1, 1}),
       true},
      {"dilation 2", {2, 8, 13, 13}, 8, {3, 3}, convParams({1, 1}, {2, 2}, {2, 2}), true},
      {"groups 2", {2, 8, 10, 10}, 12, {3, 3}, convParams({1, 1}, {1, 1}, {1, 1}, 2), true},
      {"depthwise", {2, 8, 10, 10}, 8, {3, 3}, convParams({1, 1}, {1, 1}, {1, 1}, 8), true},
      {"batch 1", {1, 8, 9, 9}, 4, {3, 3}, convParams({1, 1}, {1, 1}), true},
      {"uneven kernel, stride, padding, dilation",
       {2, 4, 11, 9},
       6,
       {3, 5},
       convParams({2, 1}, {1, 2}, {1, 2}),
       true},
      {"kernel covering the input (1x1 output)",
       {2, 4, 5, 5},
       3,
       {5, 5},
       convParams({1, 1}, {0, 0}),
       true},
  };
}

// The operands of one case, on the host.
struct Operands {
  Tensor input, weight, bias, gradOutput;
};
Operands operandsFor(const ConvCase& c, uint64_t seed) {
  Operands operands{randomTensor(c.input, seed), randomTensor(c.weightShape(), seed + 1),
                    c.bias ? randomTensor({c.outChannels}, seed + 2) : Tensor(), Tensor()};
  const Shape outputShape =
      cpu::conv2dOutputShape(operands.input, operands.weight, operands.bias, c.params);
  operands.gradOutput = randomTensor(outputShape, seed + 3);
  return operands;
}

// Forward and every gradient on the GPU against the CPU. With tf32, the bound grows by
// kTf32ProductError times the sums of |products|, which the CPU computes from |operands|.
void compareWithCpu(const ConvCase& c, bool tf32) {
  SCOPED_TRACE(c.name);
  CudaDevice& gpu = cudaDevice();
  const Operands host = operandsFor(c, 11);
  const Tensor expected = cpu::conv2dForward(host.input, host.weight, host.bias, c.params);
  const Conv2dGrads expectedGrads =
      cpu::conv2dBackward(host.input, host.weight, host.gradOutput, c.params, true, true, c.bias);

  const Tensor input = host.input.to(gpu), weight = host.weight.to(gpu);
  const Tensor bias = c.bias ? host.bias.to(gpu) : Tensor();
  const Tensor gradOutput = host.gradOutput.to(gpu);
  const Tensor output = cuda::conv2dForward(input, weight, bias, c.params);
  const Conv2dGrads grads =
      cuda::conv2dBackward(input, weight, gradOutput, c.params, true, true, c.bias);

  Tensor forwardMagnitude, inputMagnitude, weightMagnitude, biasMagnitude;
  const float productError = tf32 ? kTf32ProductError : 0.0f;
  if (tf32) {
    const Tensor absInput = absolute(host.input), absWeight = absolute(host.weight);
    const Tensor absBias = c.bias ? absolute(host.bias) : Tensor();
    forwardMagnitude = cpu::conv2dForward(absInput, absWeight, absBias, c.params);
    const Conv2dGrads magnitudes = cpu::conv2dBackward(
        absInput, absWeight, absolute(host.gradOutput), c.params, true, true, c.bias);
    inputMagnitude = magnitudes.input;
    weightMagnitude = magnitudes.weight;
    biasMagnitude = magnitudes.bias;
  }
  expectClose(output, expected, "output", kStrictTolerance, forwardMagnitude, productError);
  expectClose(grads.input, expectedGrads.input, "input gradient", kStrictTolerance, inputMagnitude,
              productError);
  expectClose(grads.weight, expectedGrads.weight, "weight gradient", kStrictTolerance,
              weightMagnitude, productError);
  if (c.bias) {
    expectClose(grads.bias, expectedGrads.bias, "bias gradient", kStrictTolerance, biasMagnitude,
                productError);
  } else {
    EXPECT_FALSE(grads.bias.defined());
  }
}

// The CPU half of the comparisons, which needs no GPU: every case is a valid convolution, and
// the TF32 bound's magnitudes (sums of |products|) bound the values they stand beside.
TEST(CudnnConvolutionCases, AreValidAndTheirMagnitudesBoundTheValues) {
  for (const ConvCase& c : convCases()) {
    SCOPED_TRACE(c.name);
    const Operands host = operandsFor(c, 11);
    const Tensor output = cpu::conv2dForward(host.input, host.weight, host.bias, c.params);
    const Tensor magnitude = cpu::conv2dForward(absolute(host.input), absolute(host.weight),
                                                c.bias ? absolute(host.bias) : Tensor(), c.params);
    const std::vector<float> values = output.toVector(), bounds = magnitude.toVector();
    for (size_t i = 0; i < values.size(); ++i) {
      ASSERT_LE(std::fabs(values[i]), bounds[i] * (1.0f + 1e-5f) + 1e-6f) << "element " << i;
    }
  }
}

// Every test that changes the settings gets the defaults back, pass or fail.
class CudnnConvolution : public ::testing::Test {
 protected:
  void TearDown() override { cuda::setCudaSettings(cuda::CudaSettings{}); }
};

TEST_F(CudnnConvolution, MatchesTheCpuInStrictFloat32) {
  SKIP_WITHOUT_GPU();
  cuda::setCudaSettings({.allowTf32 = false});
  for (const ConvCase& c : convCases()) compareWithCpu(c, false);
}

TEST_F(CudnnConvolution, MatchesTheCpuWithTf32WithinItsPrecision) {
  SKIP_WITHOUT_GPU();
  ASSERT_TRUE(cuda::cudaSettings().allowTf32) << "the default allows TF32";
  for (const ConvCase& c : convCases()) compareWithCpu(c, true);
}

TEST_F(CudnnConvolution, MatchesTheCpuWithoutAWorkspace) {
  SKIP_WITHOUT_GPU();
  // Only algorithms that need no scratch memory may run.
  cuda::setCudaSettings({.allowTf32 = false, .convWorkspaceLimitBytes = 0});
  const std::vector<ConvCase> cases = convCases();
  compareWithCpu(cases[0], false);  // 3x3
  compareWithCpu(cases[9], false);  // groups 2
}

TEST_F(CudnnConvolution, ComputesOnlyTheGradientsAskedFor) {
  SKIP_WITHOUT_GPU();
  cuda::setCudaSettings({.allowTf32 = false});
  CudaDevice& gpu = cudaDevice();
  const ConvCase c = convCases()[0];
  const Operands host = operandsFor(c, 21);
  const Conv2dGrads expected =
      cpu::conv2dBackward(host.input, host.weight, host.gradOutput, c.params, true, true, true);
  const Tensor input = host.input.to(gpu), weight = host.weight.to(gpu);
  const Tensor gradOutput = host.gradOutput.to(gpu);

  const Conv2dGrads dataOnly =
      cuda::conv2dBackward(input, weight, gradOutput, c.params, true, false, false);
  expectClose(dataOnly.input, expected.input, "input gradient");
  EXPECT_FALSE(dataOnly.weight.defined());
  EXPECT_FALSE(dataOnly.bias.defined());

  const Conv2dGrads biasOnly =
      cuda::conv2dBackward(input, weight, gradOutput, c.params, false, false, true);
  EXPECT_FALSE(biasOnly.input.defined());
  EXPECT_FALSE(biasOnly.weight.defined());
  expectClose(biasOnly.bias, expected.bias, "bias gradient");

  const Conv2dGrads none =
      cuda::conv2dBackward(input, weight, gradOutput, c.params, false, false, false);
  EXPECT_FALSE(none.input.defined() || none.weight.defined() || none.bias.defined());
}

TEST_F(CudnnConvolution, SearchesOncePerShapeSettingsAndDirection) {
  SKIP_WITHOUT_GPU();
  CudaDevice& gpu = cudaDevice();
  // A shape no other test uses, so its searches are this test's own.
  const ConvCase c{"unique", {3, 6, 9, 9}, 10, {3, 3}, convParams({1, 1}, {1, 1}), true};
  const Operands host = operandsFor(c, 31);
  const Tensor input = host.input.to(gpu), weight = host.weight.to(gpu);
  const Tensor bias = host.bias.to(gpu), gradOutput = host.gradOutput.to(gpu);
  auto step = [&] {
    cuda::conv2dForward(input, weight, bias, c.params);
    cuda::conv2dBackward(input, weight, gradOutput, c.params, true, true, true);
  };

  const size_t before = cuda::convAlgorithmSearches();
  step();
  const size_t afterFirst = cuda::convAlgorithmSearches();
  EXPECT_EQ(afterFirst - before, 3u) << "forward, backward data and backward filter";
  for (int i = 0; i < 3; ++i) step();
  EXPECT_EQ(cuda::convAlgorithmSearches(), afterFirst) << "repeated calls search again";

  // Other settings make their own choices; the old ones stay cached.
  cuda::setCudaSettings({.deterministic = true});
  step();
  EXPECT_EQ(cuda::convAlgorithmSearches(), afterFirst + 3);
  cuda::setCudaSettings(cuda::CudaSettings{});
  step();
  EXPECT_EQ(cuda::convAlgorithmSearches(), afterFirst + 3);
}

TEST_F(CudnnConvolution, TheSteadyStateAllocatesNothingNew) {
  SKIP_WITHOUT_GPU();
  CudaDevice& gpu = cudaDevice();
  const ConvCase c = convCases()[0];
  const Operands host = operandsFor(c, 41);
  const Tensor input = host.input.to(gpu), weight = host.weight.to(gpu);
  const Tensor bias = host.bias.to(gpu), gradOutput = host.gradOutput.to(gpu);
  auto step = [&] {
    const Tensor output = cuda::conv2dForward(input, weight, bias, c.params);
    const Conv2dGrads grads =
        cuda::conv2dBackward(input, weight, gradOutput, c.params, true, true, true);
  };
  step();  // searches and first allocations
  step();
  const size_t before = gpu.memoryStats().systemAllocations;
  for (int i = 0; i < 5; ++i) step();
  gpu.synchronize();
  EXPECT_EQ(gpu.memoryStats().systemAllocations, before);
}

TEST_F(CudnnConvolution, DeterministicModeGivesBitIdenticalResults) {
  SKIP_WITHOUT_GPU();
  cuda::setCudaSettings({.allowTf32 = false, .deterministic = true});
  CudaDevice& gpu = cudaDevice();
  // Large enough that a weight gradient summed with atomics would differ run to run.
  const ConvCase c{"deterministic", {8, 32, 28, 28}, 32, {3, 3}, convParams({1, 1}, {1, 1}), true};
  const Operands host = operandsFor(c, 51);
  const Tensor input = host.input.to(gpu), weight = host.weight.to(gpu);
  const Tensor bias = host.bias.to(gpu), gradOutput = host.gradOutput.to(gpu);
  auto run = [&] {
    const Tensor output = cuda::conv2dForward(input, weight, bias, c.params);
    const Conv2dGrads grads =
        cuda::conv2dBackward(input, weight, gradOutput, c.params, true, true, true);
    return std::vector<std::vector<float>>{output.toVector(), grads.input.toVector(),
                                           grads.weight.toVector(), grads.bias.toVector()};
  };
  const auto first = run();
  const auto second = run();
  const char* names[] = {"output", "input gradient", "weight gradient", "bias gradient"};
  for (size_t i = 0; i < first.size(); ++i) {
    EXPECT_TRUE(first[i] == second[i]) << names[i] << " differs between two runs";
  }
  // And they are right.
  expectClose(cuda::conv2dForward(input, weight, bias, c.params),
              cpu::conv2dForward(host.input, host.weight, host.bias, c.params), "output");
}

TEST_F(CudnnConvolution, RefusesBadOperandsWithTheCpuMessages) {
  SKIP_WITHOUT_GPU();
  CudaDevice& gpu = cudaDevice();
  const Tensor input = randomTensor({2, 3, 8, 8}, 61);
  const Tensor weight = randomTensor({4, 5, 3, 3}, 62);  // 5 input channels, input has 3
  const Conv2dParams params = convParams({1, 1}, {1, 1});
  const std::string onCpu =
      testing::errorMessage([&] { cpu::conv2dForward(input, weight, Tensor(), params); });
  const std::string onGpu = testing::errorMessage(
      [&] { cuda::conv2dForward(input.to(gpu), weight.to(gpu), Tensor(), params); });
  EXPECT_EQ(onGpu, onCpu);
  testing::expectContains(onGpu, "conv2d: input float32[2, 3, 8, 8] has 3 channels");

  const Tensor goodWeight = randomTensor({4, 3, 3, 3}, 63);
  const std::string mixed = testing::errorMessage(
      [&] { cuda::conv2dForward(input.to(gpu), goodWeight, Tensor(), params); });
  testing::expectContains(mixed, "conv2d: weight float32[4, 3, 3, 3] is on cpu");
  testing::expectContains(mixed, "one CUDA device");

  const Tensor wrongGrad = Tensor::zeros({2, 4, 7, 7}, DType::Float32, gpu);
  const std::string badGrad = testing::errorMessage([&] {
    cuda::conv2dBackward(input.to(gpu), goodWeight.to(gpu), wrongGrad, params, true, true, false);
  });
  testing::expectContains(badGrad, "conv2d backward: gradOutput float32[2, 4, 7, 7]");
  testing::expectContains(badGrad, "[2, 4, 8, 8]");
}

}  // namespace
}  // namespace imerge
