// Batch normalisation and local response normalisation: gradients against finite differences,
// forward, backward and running statistics against PyTorch (tests/reference/torch_pool_norm.py),
// and the messages bad inputs get.
#include "autograd/ops/normalization.h"

#include <gtest/gtest.h>

#include <string>

#include "autograd/grad_mode.h"
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
  Variable output = autograd::batchNorm2d(input, weight, bias, runningMean, runningVar, options);

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
