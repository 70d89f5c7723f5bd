// Batch normalisation and local response normalisation: gradients against finite differences,
// forward, backward and running statistics against PyTorch (tests/reference/torch_pool_norm.py),
// and the messages bad inputs get.
#include "autograd/ops/normalization.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "autograd/grad_mode.h"
#include "autograd/ops/elementwise.h"
#include "core/backend.h"
#include "core/cpu/cpu_backend.h"
#include "support/compare.h"
#include "support/error_text.h"
#include "support/gradcheck.h"
#include "support/reference_data.h"

namespace imerge {
namespace {

using autograd::BatchNormOptions;
using autograd::Variable;
using testing::errorMessage;
using testing::expectAllClose;
using testing::expectContains;
using testing::expectGradientsMatchFiniteDifferences;

constexpr float kRtol = 1e-4f;
constexpr float kAtol = 1e-5f;

// ---- batch norm: finite differences ----------------------------------------------------------

// Inputs of gradient checks are perturbed in place, so each op call must see its own copy of
// the running statistics only in evaluation; in training they are outputs, never inputs.
void checkBatchNormGradients(bool training, bool affine) {
  const int64_t channels = 3;
  Variable input(testing::randomTensor({3, channels, 3, 4}, 21, -2.0f, 2.0f), true);
  Variable weight(testing::randomTensor({channels}, 22, 0.5f, 1.5f), true);
  Variable bias(testing::randomTensor({channels}, 23), true);
  Tensor runningMean = testing::randomTensor({channels}, 24, -0.3f, 0.3f);
  Tensor runningVar = testing::randomTensor({channels}, 25, 0.5f, 1.5f);
  BatchNormOptions options;
  options.training = training;
  std::vector<Variable> inputs = {input};
  if (affine) inputs = {input, weight, bias};
  expectGradientsMatchFiniteDifferences(
      [&](const std::vector<Variable>& in) {
        return autograd::batchNorm2d(in[0], affine ? in[1] : Variable(),
                                     affine ? in[2] : Variable(), runningMean, runningVar, options);
      },
      inputs);
}

TEST(BatchNorm2d, TrainingGradientsMatchFiniteDifferences) {
  checkBatchNormGradients(true, true);
}
TEST(BatchNorm2d, TrainingWithoutAffineGradientMatchesFiniteDifferences) {
  checkBatchNormGradients(true, false);
}
TEST(BatchNorm2d, EvalGradientsMatchFiniteDifferences) {
  checkBatchNormGradients(false, true);
}

// ---- batch norm: against PyTorch ---------------------------------------------------------------

void expectBatchNormMatchesTorch(const std::string& caseName) {
  SCOPED_TRACE(caseName);
  const testing::ReferenceCase reference = testing::loadReferenceCase("pool_norm.json", caseName);
  const auto& json = reference.options();
  const bool affine = json["affine"].get<bool>();
  BatchNormOptions options;
  options.training = json["training"].get<bool>();
  options.momentum = json["momentum"].get<float>();
  options.eps = json["eps"].get<float>();

  Variable input(reference.tensor("input"), true);
  Variable weight = affine ? Variable(reference.tensor("weight"), true) : Variable();
  Variable bias = affine ? Variable(reference.tensor("bias"), true) : Variable();
  Tensor runningMean = reference.tensor("running_mean");
  Tensor runningVar = reference.tensor("running_var");
  const bool relu = json.value("relu", false);
  Variable output =
      relu ? autograd::batchNormRelu2d(input, weight, bias, runningMean, runningVar, options)
           : autograd::batchNorm2d(input, weight, bias, runningMean, runningVar, options);

  expectAllClose(output.tensor(), reference.tensor("output"), kRtol, kAtol, "output");
  expectAllClose(runningMean, reference.tensor("running_mean_after"), kRtol, kAtol, "running mean");
  expectAllClose(runningVar, reference.tensor("running_var_after"), kRtol, kAtol,
                 "running variance");
  output.backward(reference.tensor("grad_output"));
  expectAllClose(input.grad(), reference.tensor("grad_input"), kRtol, kAtol, "grad_input");
  if (affine) {
    expectAllClose(weight.grad(), reference.tensor("grad_weight"), kRtol, kAtol, "grad_weight");
    expectAllClose(bias.grad(), reference.tensor("grad_bias"), kRtol, kAtol, "grad_bias");
  }
}

TEST(BatchNorm2d, TrainingMatchesTorch) {
  expectBatchNormMatchesTorch("bn_train");
}
TEST(BatchNorm2d, TrainingWithMomentumAndEpsMatchesTorch) {
  expectBatchNormMatchesTorch("bn_train_momentum");
}
TEST(BatchNorm2d, TrainingWithoutAffineMatchesTorch) {
  expectBatchNormMatchesTorch("bn_train_noaffine");
}
TEST(BatchNorm2d, EvalMatchesTorch) {
  expectBatchNormMatchesTorch("bn_eval");
}

TEST(BatchNormRelu2d, TrainingMatchesTorch) {
  expectBatchNormMatchesTorch("bn_relu_train");
}
TEST(BatchNormRelu2d, TrainingWithoutAffineMatchesTorch) {
  expectBatchNormMatchesTorch("bn_relu_train_noaffine");
}
TEST(BatchNormRelu2d, EvalMatchesTorch) {
  expectBatchNormMatchesTorch("bn_relu_eval");
}

// ---- batch norm + relu: the fused kernels against the two ops in turn --------------------------

struct BatchNormReluResult {
  Tensor output, gradInput, gradWeight, gradBias, runningMean, runningVar;
};

// One training forward and backward, fused or as relu(batchNorm2d(...)), from the same values.
BatchNormReluResult runBatchNormRelu(bool fused, const Tensor& x, const Tensor& gradOutput) {
  const int64_t channels = x.dim(1);
  Variable input(x.clone(), true);
  Variable weight(testing::randomTensor({channels}, 32, 0.5f, 1.5f), true);
  Variable bias(testing::randomTensor({channels}, 33), true);
  BatchNormReluResult result{Tensor(),
                             Tensor(),
                             Tensor(),
                             Tensor(),
                             testing::randomTensor({channels}, 34, -0.3f, 0.3f),
                             testing::randomTensor({channels}, 35, 0.5f, 1.5f)};
  Variable output =
      fused ? autograd::batchNormRelu2d(input, weight, bias, result.runningMean, result.runningVar,
                                        BatchNormOptions{})
            : autograd::relu(autograd::batchNorm2d(input, weight, bias, result.runningMean,
                                                   result.runningVar, BatchNormOptions{}));
  output.backward(gradOutput);
  result.output = output.tensor();
  result.gradInput = input.grad();
  result.gradWeight = weight.grad();
  result.gradBias = bias.grad();
  return result;
}

// The forward does the same arithmetic, so it agrees bit for bit. The backward's sums are
// vectorised differently once they select, so they agree to rounding. About half of the outputs
// are clamped, and one image's channel lies wholly below zero.
TEST(BatchNormRelu2d, FusedEqualsBatchNormThenReluExactly) {
  Tensor x = testing::randomTensor({4, 5, 7, 9}, 31, -2.0f, 2.0f);
  float* values = x.data<float>();
  for (int64_t i = 0; i < 7 * 9; ++i) values[(1 * 5 + 2) * 7 * 9 + i] = -5.0f - 0.01f * i;
  const Tensor gradOutput = testing::randomTensor(x.shape(), 36);
  const BatchNormReluResult fused = runBatchNormRelu(true, x, gradOutput);
  const BatchNormReluResult separate = runBatchNormRelu(false, x, gradOutput);
  EXPECT_EQ(fused.output.toVector(), separate.output.toVector());
  expectAllClose(fused.gradInput, separate.gradInput, 1e-5f, 1e-6f, "grad_input");
  expectAllClose(fused.gradWeight, separate.gradWeight, 1e-5f, 1e-6f, "grad_weight");
  expectAllClose(fused.gradBias, separate.gradBias, 1e-5f, 1e-6f, "grad_bias");
  EXPECT_EQ(fused.runningMean.toVector(), separate.runningMean.toVector());
  EXPECT_EQ(fused.runningVar.toVector(), separate.runningVar.toVector());
  int64_t clamped = 0;
  for (float value : fused.output.toVector()) clamped += value == 0.0f;
  EXPECT_GT(clamped, fused.output.numel() / 4);
  EXPECT_LT(clamped, fused.output.numel() * 3 / 4);
}

// What a backend without fused kernels runs (the CUDA one): Backend's defaults, called here on
// the CPU backend past its overrides, against the CPU's fused kernels.
TEST(BatchNormRelu2d, BackendDefaultsEqualTheFusedCpuKernels) {
  const Backend& cpu = cpuBackend();
  const Tensor x = testing::randomTensor({3, 4, 5, 6}, 41, -2.0f, 2.0f);
  const Tensor weight = testing::randomTensor({4}, 42, 0.5f, 1.5f);
  const Tensor bias = testing::randomTensor({4}, 43);
  const Tensor gradOutput = testing::randomTensor(x.shape(), 44);
  Tensor noMean, noVar;
  const BatchNormTrainingOutput fused =
      cpu.batchNormReluTrainingForward(x, weight, bias, noMean, noVar, 0.1f, 1e-5f);
  const BatchNormTrainingOutput composed =
      cpu.Backend::batchNormReluTrainingForward(x, weight, bias, noMean, noVar, 0.1f, 1e-5f);
  EXPECT_EQ(fused.output.toVector(), composed.output.toVector());
  const BatchNormGradients fusedGradients = cpu.batchNormReluTrainingBackward(
      gradOutput, fused.output, x, weight, fused.savedMean, fused.savedSpread, 1e-5f);
  const BatchNormGradients composedGradients = cpu.Backend::batchNormReluTrainingBackward(
      gradOutput, composed.output, x, weight, composed.savedMean, composed.savedSpread, 1e-5f);
  expectAllClose(fusedGradients.input, composedGradients.input, 1e-5f, 1e-6f, "grad_input");
  expectAllClose(fusedGradients.weight, composedGradients.weight, 1e-5f, 1e-6f, "grad_weight");
  expectAllClose(fusedGradients.bias, composedGradients.bias, 1e-5f, 1e-6f, "grad_bias");
}

TEST(BatchNormRelu2d, TrainingGradientsMatchFiniteDifferences) {
  const int64_t channels = 3;
  Variable input(testing::randomTensor({2, channels, 3, 4}, 51, -2.0f, 2.0f), true);
  Variable weight(testing::randomTensor({channels}, 52, 0.5f, 1.5f), true);
  Variable bias(testing::randomTensor({channels}, 53, -0.5f, 0.5f), true);
  Tensor runningMean = Tensor::zeros({channels});
  Tensor runningVar = Tensor::full({channels}, 1.0f);
  // Finite differences across relu's kink are meaningless: every value entering relu must lie
  // further from 0 than a perturbation of 1e-3 can move it. Perturbing an input moves it by at
  // most gamma / std * 1e-3 (under 1.5e-3 here), gamma by |x_hat| * 1e-3 (under 2.5e-3), beta
  // by 1e-3.
  const Variable normalised =
      autograd::batchNorm2d(input, weight, bias, runningMean, runningVar, BatchNormOptions{});
  for (float value : normalised.tensor().toVector()) ASSERT_GT(std::abs(value), 0.01f);
  expectGradientsMatchFiniteDifferences(
      [&](const std::vector<Variable>& in) {
        return autograd::batchNormRelu2d(in[0], in[1], in[2], runningMean, runningVar,
                                         BatchNormOptions{});
      },
      {input, weight, bias});
}

TEST(BatchNormRelu2d, BackwardRejectsReluOutputOfAnotherShape) {
  const Tensor x = testing::randomTensor({2, 3, 4, 4}, 61);
  const Tensor mean = Tensor::zeros({3});
  const Tensor variance = Tensor::full({3}, 1.0f);
  expectContains(errorMessage([&] {
                   cpuBackend().batchNormReluTrainingBackward(x, Tensor::zeros({2, 3, 4, 5}), x,
                                                              Tensor(), mean, variance, 1e-5f);
                 }),
                 "batchNorm2d backward: relu output float32[2, 3, 4, 5] does not match input "
                 "float32[2, 3, 4, 4]");
}

TEST(BatchNorm2d, TrainingWithoutRunningStatisticsStillNormalises) {
  const testing::ReferenceCase reference = testing::loadReferenceCase("pool_norm.json", "bn_train");
  Variable input(reference.tensor("input"));
  Tensor noMean, noVar;
  Variable output =
      autograd::batchNorm2d(input, Variable(reference.tensor("weight")),
                            Variable(reference.tensor("bias")), noMean, noVar, BatchNormOptions{});
  expectAllClose(output.tensor(), reference.tensor("output"), kRtol, kAtol, "output");
  EXPECT_FALSE(noMean.defined());
}

TEST(BatchNorm2d, NoGradTrainingStillUpdatesRunningStatistics) {
  const testing::ReferenceCase reference = testing::loadReferenceCase("pool_norm.json", "bn_train");
  Tensor runningMean = reference.tensor("running_mean");
  Tensor runningVar = reference.tensor("running_var");
  autograd::NoGradGuard noGrad;
  Variable output = autograd::batchNorm2d(
      Variable(reference.tensor("input")), Variable(reference.tensor("weight")),
      Variable(reference.tensor("bias")), runningMean, runningVar, BatchNormOptions{});
  EXPECT_FALSE(output.requiresGrad());
  expectAllClose(runningVar, reference.tensor("running_var_after"), kRtol, kAtol,
                 "running variance");
}

// ---- batch norm: bad inputs --------------------------------------------------------------------

TEST(BatchNorm2d, RejectsWeightOfTheWrongSize) {
  Variable input(Tensor::zeros({2, 4, 5, 5}));
  Variable weight(Tensor::zeros({3}));
  Tensor mean = Tensor::zeros({4}), var = Tensor::full({4}, 1.0f);
  const std::string message = errorMessage(
      [&] { autograd::batchNorm2d(input, weight, Variable(), mean, var, BatchNormOptions{}); });
  expectContains(message,
                 "batchNorm2d: weight float32[3] does not match 4 channels of input "
                 "float32[2, 4, 5, 5]");
}

TEST(BatchNorm2d, RejectsRunningStatisticsOfTheWrongSize) {
  Variable input(Tensor::zeros({2, 4, 5, 5}));
  Tensor mean = Tensor::zeros({4}), var = Tensor::full({5}, 1.0f);
  BatchNormOptions eval;
  eval.training = false;
  const std::string message =
      errorMessage([&] { autograd::batchNorm2d(input, Variable(), Variable(), mean, var, eval); });
  expectContains(message, "batchNorm2d: running variance float32[5] does not match 4 channels");
  expectContains(message, "float32[2, 4, 5, 5]");
}

TEST(BatchNorm2d, RejectsInputWithoutFourDimensions) {
  Variable input(Tensor::zeros({8, 4}));
  Tensor mean = Tensor::zeros({4}), var = Tensor::full({4}, 1.0f);
  const std::string message = errorMessage(
      [&] { autograd::batchNorm2d(input, Variable(), Variable(), mean, var, BatchNormOptions{}); });
  expectContains(message, "batchNorm2d: input float32[8, 4]");
}

TEST(BatchNorm2d, RejectsTrainingOnOneValuePerChannel) {
  Variable input(Tensor::zeros({1, 4, 1, 1}));
  Tensor mean = Tensor::zeros({4}), var = Tensor::full({4}, 1.0f);
  const std::string message = errorMessage(
      [&] { autograd::batchNorm2d(input, Variable(), Variable(), mean, var, BatchNormOptions{}); });
  expectContains(message, "float32[1, 4, 1, 1]");
}

// ---- LRN ---------------------------------------------------------------------------------------

TEST(LocalResponseNorm, GradientMatchesFiniteDifferences) {
  // Odd sizes run on oneDNN, even sizes on the direct loop: check both, with an alpha large
  // enough that the normalisation term matters.
  for (int64_t size : {1, 2, 3, 4, 5}) {
    SCOPED_TRACE("size " + std::to_string(size));
    Variable input(testing::randomTensor({2, 6, 3, 3}, 31, -1.5f, 1.5f), true);
    expectGradientsMatchFiniteDifferences(
        [&](const std::vector<Variable>& in) {
          return autograd::localResponseNorm(in[0], size, 0.5f, 0.75f, 1.0f);
        },
        {input});
  }
}

void expectLrnMatchesTorch(const std::string& caseName) {
  SCOPED_TRACE(caseName);
  const testing::ReferenceCase reference = testing::loadReferenceCase("pool_norm.json", caseName);
  const auto& json = reference.options();
  Variable input(reference.tensor("input"), true);
  Variable output =
      autograd::localResponseNorm(input, json["size"].get<int64_t>(), json["alpha"].get<float>(),
                                  json["beta"].get<float>(), json["k"].get<float>());
  expectAllClose(output.tensor(), reference.tensor("output"), kRtol, kAtol, "output");
  output.backward(reference.tensor("grad_output"));
  expectAllClose(input.grad(), reference.tensor("grad_input"), kRtol, kAtol, "grad_input");
}

TEST(LocalResponseNorm, MatchesTorchAlexNet) {
  expectLrnMatchesTorch("lrn_alexnet");
}
TEST(LocalResponseNorm, MatchesTorchOddSizeStrong) {
  expectLrnMatchesTorch("lrn_size5_strong");
}
TEST(LocalResponseNorm, MatchesTorchEvenSizes) {
  expectLrnMatchesTorch("lrn_size4");
  expectLrnMatchesTorch("lrn_size2");
}

TEST(LocalResponseNorm, NoGradModeGivesTheSameOutput) {
  const testing::ReferenceCase reference =
      testing::loadReferenceCase("pool_norm.json", "lrn_size4");
  autograd::NoGradGuard noGrad;
  Variable output =
      autograd::localResponseNorm(Variable(reference.tensor("input"), true), 4, 0.5f, 0.75f, 1.0f);
  expectAllClose(output.tensor(), reference.tensor("output"), kRtol, kAtol, "output");
}

TEST(LocalResponseNorm, RejectsInputWithoutFourDimensions) {
  Variable input(Tensor::zeros({2, 6, 9}));
  const std::string message =
      errorMessage([&] { autograd::localResponseNorm(input, 5, 1e-4f, 0.75f, 2.0f); });
  expectContains(message, "localResponseNorm: input float32[2, 6, 9]");
}

TEST(LocalResponseNorm, RejectsNonPositiveSize) {
  Variable input(Tensor::zeros({1, 6, 2, 2}));
  const std::string message =
      errorMessage([&] { autograd::localResponseNorm(input, 0, 1e-4f, 0.75f, 2.0f); });
  expectContains(message, "localResponseNorm: size 0 must be positive");
  expectContains(message, "[1, 6, 2, 2]");
}

}  // namespace
}  // namespace imerge
