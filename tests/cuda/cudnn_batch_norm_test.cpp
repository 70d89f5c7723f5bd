// cuDNN batch normalisation (core/cuda/batch_norm.h) against the CPU kernels
// (core/cpu/batch_norm.h) on the same random operands, to 1e-4: training and inference forward
// and backward, the running statistics, undefined weight and bias, the eps check and operands
// on the wrong device. Needs a GPU: each test skips, saying why, where there is none (ctest label
// "gpu"). The own kernels' arithmetic is also checked without a GPU by
// tests/core/batch_norm_math_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/cpu/batch_norm.h"
#include "core/cuda/batch_norm.h"
#include "core/cuda/cuda_device.h"
#include "support/error_text.h"
#include "support/gpu_test.h"
#include "support/gradcheck.h"

namespace imerge {
namespace {

using testing::expectClose;
using testing::randomTensor;

constexpr float kEps = 1e-5f;
constexpr float kMomentum = 0.1f;

// 1 / sqrt(variance + eps) on the host: what savedInvStd must hold.
Tensor inverseStd(const Tensor& variance, float eps) {
  std::vector<float> values = variance.toVector();
  for (float& v : values) v = 1.0f / std::sqrt(v + eps);
  return Tensor::fromVector(values, variance.shape());
}

// Shapes: a small odd one, one whose channels hold more elements than a block has threads, and
// a plane of one (batch norm after global pooling).
std::vector<Shape> shapes() {
  return {{4, 6, 5, 7}, {8, 16, 28, 28}, {8, 16, 1, 1}};
}

// The operands of one shape, on the host. The input's mean is shifted away from zero so that
// centring matters.
struct Operands {
  Tensor input, weight, bias, gradOutput, runningMean, runningVar;
};
Operands operandsFor(const Shape& shape, uint64_t seed) {
  const int64_t channels = shape[1];
  return {randomTensor(shape, seed, -1.0f, 3.0f),
          randomTensor({channels}, seed + 1, 0.5f, 1.5f),
          randomTensor({channels}, seed + 2),
          randomTensor(shape, seed + 3),
          randomTensor({channels}, seed + 4, -0.5f, 0.5f),
          randomTensor({channels}, seed + 5, 0.5f, 2.0f)};
}

void compareTraining(const Shape& shape, bool affine) {
  SCOPED_TRACE(shapeToString(shape) + (affine ? " with" : " without") + " weight and bias");
  CudaDevice& gpu = cudaDevice();
  const Operands host = operandsFor(shape, 100);
  const Tensor weight = affine ? host.weight : Tensor(), bias = affine ? host.bias : Tensor();
  const cpu::BatchNormTrainingResult expected =
      cpu::batchNormTrainingForward(host.input, weight, bias, kEps);
  Tensor expectedMean = host.runningMean.clone(), expectedVar = host.runningVar.clone();
  cpu::updateRunningStatistics(expectedMean, expectedVar, expected.mean, expected.variance,
                               kMomentum, shape[0] * shape[2] * shape[3]);

  const Tensor input = host.input.to(gpu);
  const Tensor gpuWeight = affine ? weight.to(gpu) : Tensor();
  const Tensor gpuBias = affine ? bias.to(gpu) : Tensor();
  Tensor runningMean = host.runningMean.to(gpu), runningVar = host.runningVar.to(gpu);
  const cuda::BatchNormTrainingResult result = cuda::batchNormTrainingForward(
      input, gpuWeight, gpuBias, runningMean, runningVar, kMomentum, kEps);
  expectClose(result.output, expected.output, "output");
  expectClose(result.savedMean, expected.mean, "saved mean");
  expectClose(result.savedInvStd, inverseStd(expected.variance, kEps), "saved inverse std");
  expectClose(runningMean, expectedMean, "running mean");
  expectClose(runningVar, expectedVar, "running variance");

  const cpu::BatchNormGradients expectedGrads = cpu::batchNormBackward(
      host.gradOutput, host.input, weight, expected.mean, expected.variance, kEps, true);
  const cpu::BatchNormGradients grads = cuda::batchNormTrainingBackward(
      host.gradOutput.to(gpu), input, gpuWeight, result.savedMean, result.savedInvStd, kEps);
  expectClose(grads.input, expectedGrads.input, "input gradient");
  expectClose(grads.weight, expectedGrads.weight, "weight gradient");
  expectClose(grads.bias, expectedGrads.bias, "bias gradient");
}

void compareInference(const Shape& shape, bool affine) {
  SCOPED_TRACE(shapeToString(shape) + (affine ? " with" : " without") + " weight and bias");
  CudaDevice& gpu = cudaDevice();
  const Operands host = operandsFor(shape, 200);
  const Tensor weight = affine ? host.weight : Tensor(), bias = affine ? host.bias : Tensor();
  const Tensor gpuWeight = affine ? weight.to(gpu) : Tensor();
  const Tensor gpuBias = affine ? bias.to(gpu) : Tensor();
  const Tensor input = host.input.to(gpu);
  const Tensor mean = host.runningMean.to(gpu), variance = host.runningVar.to(gpu);

  expectClose(cuda::batchNormInferenceForward(input, gpuWeight, gpuBias, mean, variance, kEps),
              cpu::batchNormInferenceForward(host.input, weight, bias, host.runningMean,
                                             host.runningVar, kEps),
              "output");
  const cpu::BatchNormGradients expected = cpu::batchNormBackward(
      host.gradOutput, host.input, weight, host.runningMean, host.runningVar, kEps, false);
  const cpu::BatchNormGradients grads = cuda::batchNormInferenceBackward(
      host.gradOutput.to(gpu), input, gpuWeight, mean, variance, kEps);
  expectClose(grads.input, expected.input, "input gradient");
  expectClose(grads.weight, expected.weight, "weight gradient");
  expectClose(grads.bias, expected.bias, "bias gradient");
}

TEST(CudnnBatchNorm, TrainingMatchesTheCpu) {
  SKIP_WITHOUT_GPU();
  for (const Shape& shape : shapes()) compareTraining(shape, true);
}

TEST(CudnnBatchNorm, InferenceMatchesTheCpu) {
  SKIP_WITHOUT_GPU();
  for (const Shape& shape : shapes()) compareInference(shape, true);
}

TEST(CudnnBatchNorm, UndefinedWeightAndBiasMeanOnesAndZeros) {
  SKIP_WITHOUT_GPU();
  compareTraining({4, 6, 5, 7}, false);
  compareInference({4, 6, 5, 7}, false);
}

TEST(CudnnBatchNorm, RunningStatisticsFollowPyTorchOverSteps) {
  SKIP_WITHOUT_GPU();
  CudaDevice& gpu = cudaDevice();
  const Shape shape{4, 3, 6, 5};
  Tensor expectedMean = Tensor::zeros({3}), expectedVar = Tensor::full({3}, 1.0f);
  Tensor runningMean = expectedMean.to(gpu), runningVar = expectedVar.to(gpu);
  for (uint64_t step = 0; step < 4; ++step) {
    const Tensor input = randomTensor(shape, 300 + step, -2.0f, 4.0f);
    const cpu::BatchNormTrainingResult batch =
        cpu::batchNormTrainingForward(input, Tensor(), Tensor(), kEps);
    cpu::updateRunningStatistics(expectedMean, expectedVar, batch.mean, batch.variance, 0.3f,
                                 shape[0] * shape[2] * shape[3]);
    cuda::batchNormTrainingForward(input.to(gpu), Tensor(), Tensor(), runningMean, runningVar, 0.3f,
                                   kEps);
  }
  expectClose(runningMean, expectedMean, "running mean");
  expectClose(runningVar, expectedVar, "running variance");

  // Without running statistics nothing is updated and nothing fails.
  Tensor none;
  const cuda::BatchNormTrainingResult result = cuda::batchNormTrainingForward(
      randomTensor(shape, 310).to(gpu), Tensor(), Tensor(), none, none, 0.3f, kEps);
  EXPECT_EQ(result.savedMean.shape(), (Shape{3}));
}

TEST(CudnnBatchNorm, TheSteadyStateAllocatesNothingNew) {
  SKIP_WITHOUT_GPU();
  CudaDevice& gpu = cudaDevice();
  const Shape shape{8, 16, 14, 14};
  const Operands host = operandsFor(shape, 400);
  const Tensor input = host.input.to(gpu), gradOutput = host.gradOutput.to(gpu);
  Tensor runningMean = host.runningMean.to(gpu), runningVar = host.runningVar.to(gpu);
  auto step = [&] {
    const cuda::BatchNormTrainingResult result = cuda::batchNormTrainingForward(
        input, Tensor(), Tensor(), runningMean, runningVar, kMomentum, kEps);
    const cpu::BatchNormGradients grads = cuda::batchNormTrainingBackward(
        gradOutput, input, Tensor(), result.savedMean, result.savedInvStd, kEps);
    const cpu::BatchNormGradients frozen = cuda::batchNormInferenceBackward(
        gradOutput, input, Tensor(), runningMean, runningVar, kEps);
  };
  step();
  const size_t before = gpu.memoryStats().systemAllocations;
  for (int i = 0; i < 5; ++i) step();
  gpu.synchronize();
  EXPECT_EQ(gpu.memoryStats().systemAllocations, before);
}

TEST(CudnnBatchNorm, RefusesAnEpsBelowCudnnsMinimum) {
  SKIP_WITHOUT_GPU();
  CudaDevice& gpu = cudaDevice();
  const Operands host = operandsFor({2, 3, 4, 4}, 500);
  const Tensor input = host.input.to(gpu);
  const Tensor mean = host.runningMean.to(gpu), variance = host.runningVar.to(gpu);
  Tensor none;
  for (const float eps : {-1e-3f, std::numeric_limits<float>::quiet_NaN()}) {
    const std::string training = testing::errorMessage([&] {
      cuda::batchNormTrainingForward(input, Tensor(), Tensor(), none, none, kMomentum, eps);
    });
    testing::expectContains(training, "batchNorm2d: eps = ");
    testing::expectContains(training, "CUDNN_BN_MIN_EPSILON");
    const std::string inference = testing::errorMessage(
        [&] { cuda::batchNormInferenceForward(input, Tensor(), Tensor(), mean, variance, eps); });
    testing::expectContains(inference, "CUDNN_BN_MIN_EPSILON");
  }
  testing::expectContains(
      testing::errorMessage(
          [&] { cuda::batchNormInferenceBackward(input, input, Tensor(), mean, variance, -1.0f); }),
      "batchNorm2d backward: eps = -1");
}

TEST(CudnnBatchNorm, RefusesOperandsOnAnotherDeviceOrShape) {
  SKIP_WITHOUT_GPU();
  CudaDevice& gpu = cudaDevice();
  const Operands host = operandsFor({2, 3, 4, 4}, 600);
  const Tensor input = host.input.to(gpu);
  Tensor hostMean = host.runningMean, gpuVar = host.runningVar.to(gpu);
  const std::string mixed = testing::errorMessage([&] {
    cuda::batchNormTrainingForward(input, Tensor(), Tensor(), hostMean, gpuVar, kMomentum, kEps);
  });
  testing::expectContains(mixed, "batchNorm2d: running mean float32[3] is on cpu");

  Tensor none;
  const std::string onlyOne = testing::errorMessage([&] {
    cuda::batchNormTrainingForward(input, Tensor(), Tensor(), none, gpuVar, kMomentum, kEps);
  });
  testing::expectContains(onlyOne, "both defined or both undefined");

  const Tensor wrongWeight = randomTensor({5}, 601).to(gpu);
  const std::string channels = testing::errorMessage(
      [&] { cuda::batchNormInferenceForward(input, wrongWeight, Tensor(), gpuVar, gpuVar, kEps); });
  testing::expectContains(channels, "batchNorm2d: weight float32[5] does not match 3 channels");

  const std::string onHost = testing::errorMessage([&] {
    cuda::batchNormInferenceForward(host.input, Tensor(), Tensor(), gpuVar, gpuVar, kEps);
  });
  testing::expectContains(onHost, "is on cpu, not on a CUDA device");
}

}  // namespace
}  // namespace imerge
