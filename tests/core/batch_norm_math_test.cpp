// The arithmetic and indexing of the CUDA batch-norm kernels (core/cuda/batch_norm_math.h), run
// on the CPU the way the kernels run them (blocks per channel, threads striding over the
// channel's elements, the shared-memory tree) and compared with core/cpu/batch_norm. This
// checks the own kernels' logic without a GPU; tests/cuda/cudnn_batch_norm_test.cpp checks the
// kernels themselves where a GPU is present.
#include "core/cuda/batch_norm_math.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "core/cpu/batch_norm.h"
#include "support/compare.h"
#include "support/gradcheck.h"

namespace imerge {
namespace {

namespace math = cuda::batch_norm_math;
using testing::expectClose;
using testing::randomTensor;

struct InferenceBackward {
  std::vector<float> gradInput, gradWeight, gradBias;
};

// inferenceBackwardKernel, block by block and thread by thread, with its tree reduction.
InferenceBackward simulateInferenceBackward(const Tensor& gradOutput, const Tensor& input,
                                            const Tensor& weight, const Tensor& mean,
                                            const Tensor& variance, float eps, int threads) {
  const int64_t batch = input.dim(0), channels = input.dim(1);
  const int64_t plane = input.dim(2) * input.dim(3), count = batch * plane;
  InferenceBackward result{
      std::vector<float>(input.numel(), std::numeric_limits<float>::quiet_NaN()),
      std::vector<float>(channels), std::vector<float>(channels)};
  for (int64_t c = 0; c < channels; ++c) {  // blockIdx.x
    const float invStd = math::inverseStd(variance.data<float>()[c], eps);
    const float gamma = weight.defined() ? weight.data<float>()[c] : 1.0f;
    std::vector<math::ChannelSums> shared(threads);
    for (int t = 0; t < threads; ++t) {  // threadIdx.x
      shared[t] = math::inferenceBackwardShare(gradOutput.data<float>(), input.data<float>(),
                                               result.gradInput.data(), c, channels, plane, count,
                                               t, threads, mean.data<float>()[c], gamma * invStd);
    }
    for (int stride = threads / 2; stride > 0; stride /= 2) {
      for (int t = 0; t < stride; ++t) {
        shared[t].gradOutput += shared[t + stride].gradOutput;
        shared[t].gradOutputCentred += shared[t + stride].gradOutputCentred;
      }
    }
    math::parameterGradientsAt(c, shared[0], invStd, result.gradWeight.data(),
                               result.gradBias.data());
  }
  return result;
}

TEST(BatchNormMath, ChannelElementsCoverTheTensorOnce) {
  const int64_t batch = 3, channels = 4, plane = 5;
  std::vector<int> hits(batch * channels * plane, 0);
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t j = 0; j < batch * plane; ++j) {
      const int64_t index = math::channelElement(j, c, channels, plane);
      ASSERT_GE(index, 0);
      ASSERT_LT(index, static_cast<int64_t>(hits.size()));
      // The element belongs to channel c: NCHW puts it at (n * C + c) * plane + i.
      EXPECT_EQ((index / plane) % channels, c);
      ++hits[index];
    }
  }
  for (int count : hits) EXPECT_EQ(count, 1);
}

TEST(BatchNormMath, InferenceBackwardMatchesTheCpu) {
  const float eps = 1e-5f;
  // Shapes where threads outnumber a channel's elements, where they divide them unevenly, and
  // a plane of one (batch norm after global pooling).
  for (const Shape& shape : {Shape{3, 5, 4, 6}, Shape{2, 3, 1, 1}, Shape{4, 2, 17, 19}}) {
    const int64_t channels = shape[1];
    const Tensor input = randomTensor(shape, 1), gradOutput = randomTensor(shape, 2);
    const Tensor weight = randomTensor({channels}, 3, 0.5f, 1.5f);
    const Tensor mean = randomTensor({channels}, 4, -0.2f, 0.2f);
    const Tensor variance = randomTensor({channels}, 5, 0.1f, 2.0f);
    for (const bool withWeight : {true, false}) {
      const Tensor gamma = withWeight ? weight : Tensor();
      const cpu::BatchNormGradients expected =
          cpu::batchNormBackward(gradOutput, input, gamma, mean, variance, eps, false);
      for (const int threads : {1, 8, 256}) {
        SCOPED_TRACE(shapeToString(shape) + (withWeight ? " with" : " without") +
                     " weight, threads " + std::to_string(threads));
        const InferenceBackward actual =
            simulateInferenceBackward(gradOutput, input, gamma, mean, variance, eps, threads);
        expectClose(actual.gradInput, expected.input, "gradInput", 1e-6f);  // NaN if unwritten
        expectClose(actual.gradWeight, expected.weight, "gradWeight", 1e-5f);
        expectClose(actual.gradBias, expected.bias, "gradBias", 1e-5f);
      }
    }
  }
}

TEST(BatchNormMath, RunningStatisticsMatchTheCpuRule) {
  const float eps = 1e-5f, momentum = 0.1f;
  const Shape shape{4, 6, 5, 3};
  const int64_t channels = shape[1], count = shape[0] * shape[2] * shape[3];
  const Tensor input = randomTensor(shape, 6, -2.0f, 3.0f);
  const cpu::BatchNormTrainingResult batch =
      cpu::batchNormTrainingForward(input, Tensor(), Tensor(), eps);
  // cuDNN returns 1 / sqrt(biased variance + eps); the kernel starts from that.
  std::vector<float> savedInvStd(channels);
  for (int64_t c = 0; c < channels; ++c) {
    savedInvStd[c] = math::inverseStd(batch.variance.data<float>()[c], eps);
  }
  Tensor expectedMean = randomTensor({channels}, 7);
  Tensor expectedVar = randomTensor({channels}, 8, 0.5f, 1.5f);
  std::vector<float> runningMean = expectedMean.toVector(), runningVar = expectedVar.toVector();
  cpu::updateRunningStatistics(expectedMean, expectedVar, batch.mean, batch.variance, momentum,
                               count);
  for (int64_t c = 0; c < channels; ++c) {
    math::updateRunningStatisticsAt(c, runningMean.data(), runningVar.data(),
                                    batch.mean.data<float>(), savedInvStd.data(), eps, momentum,
                                    count);
  }
  expectClose(runningMean, expectedMean, "running mean", 1e-6f);
  expectClose(runningVar, expectedVar, "running variance", 1e-5f);
}

TEST(BatchNormMath, VarianceComesBackFromTheInverseStd) {
  const float eps = 1e-5f;
  for (const float variance : {0.0f, 1e-9f, 1e-5f, 0.3f, 1.0f, 250.0f, 1e4f}) {
    const float recovered = math::varianceFromInverseStd(math::inverseStd(variance, eps), eps);
    EXPECT_GE(recovered, 0.0f);
    // Absolute error stays within float rounding of variance + eps.
    EXPECT_NEAR(recovered, variance, 1e-6f * (variance + eps)) << "variance " << variance;
  }
}

TEST(BatchNormMath, BesselFactorKeepsTheBiasedVarianceForOneElement) {
  EXPECT_FLOAT_EQ(math::besselFactor(1), 1.0f);
  EXPECT_FLOAT_EQ(math::besselFactor(2), 2.0f);
  EXPECT_FLOAT_EQ(math::besselFactor(101), 101.0f / 100.0f);
}

}  // namespace
}  // namespace imerge
