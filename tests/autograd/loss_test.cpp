// softmaxCrossEntropy, logSoftmax and crossEntropy with PyTorch's options: forward and backward
// against PyTorch (tests/reference/torch_loss.py), finite differences, numerical stability at
// large inputs, and the messages bad inputs get.
#include "autograd/ops/loss.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <span>
#include <string>
#include <vector>

#include "autograd/grad_mode.h"
#include "autograd/ops/elementwise.h"
#include "autograd/ops/softmax.h"
#include "support/compare.h"
#include "support/error_text.h"
#include "support/gradcheck.h"
#include "support/reference_data.h"
#include "support/tensor_builders.h"

namespace imerge {
namespace {

using autograd::Variable;
using testing::errorMessage;
using testing::expectContains;
using testing::floats;

Tensor labelsOf(std::vector<int64_t> values) {
  const int64_t count = static_cast<int64_t>(values.size());
  return Tensor::fromVector(values, {count});
}

class LossReference : public ::testing::TestWithParam<std::string> {};

TEST_P(LossReference, ForwardAndBackwardMatchPyTorch) {
  const testing::ReferenceCase reference = testing::loadReferenceCase("loss.json", GetParam());
  Variable logits(reference.tensor("logits"), true);
  const Tensor labels = reference.tensor("labels");
  Variable loss = autograd::softmaxCrossEntropy(logits, labels);
  ASSERT_EQ(loss.shape(), Shape({1}));
  testing::expectAllClose(loss.tensor(), reference.tensor("loss"), 1e-4f, 1e-6f, "loss");
  loss.backward();
  testing::expectAllClose(logits.grad(), reference.tensor("grad_logits"), 1e-4f, 1e-7f,
                          "grad_logits");
}

INSTANTIATE_TEST_SUITE_P(Cases, LossReference,
                         ::testing::Values("n1_c2", "n4_c3", "n8_c10", "n8_c50", "n5_c7_large",
                                           "n32_c10_large"),
                         [](const auto& info) { return info.param; });

TEST(SoftmaxCrossEntropy, MatchesFiniteDifferences) {
  const Tensor labels = labelsOf({2, 0, 4, 1, 3, 3});
  testing::expectGradientsMatchFiniteDifferences(
      [&](const std::vector<Variable>& in) { return autograd::softmaxCrossEntropy(in[0], labels); },
      {Variable(testing::randomTensor({6, 5}, 11, -2.0f, 2.0f), true)});
}

TEST(SoftmaxCrossEntropy, UpstreamGradientScalesTheLogitsGradient) {
  const Tensor labels = labelsOf({1, 0});
  Variable single(testing::randomTensor({2, 3}, 5), true);
  autograd::softmaxCrossEntropy(single, labels).backward();
  Variable scaled(single.tensor().clone(), true);
  autograd::scale(autograd::softmaxCrossEntropy(scaled, labels), 3.0f).backward();
  const std::vector<float> once = single.grad().toVector();
  const std::vector<float> thrice = scaled.grad().toVector();
  for (size_t i = 0; i < once.size(); ++i) EXPECT_NEAR(thrice[i], 3.0f * once[i], 1e-6f);
}

TEST(SoftmaxCrossEntropy, StaysFiniteForExtremeLogits) {
  // Row 0 is confidently wrong by 100 (loss ~100), row 1 confidently right (loss ~0). Without
  // the max shift exp(500) overflows to inf; without the log-sum-exp form log(0) does.
  Variable logits(floats({500.0f, -500.0f, -500.0f, -50.0f, 50.0f, -50.0f}, {2, 3}), true);
  Variable loss = autograd::softmaxCrossEntropy(logits, labelsOf({1, 1}));
  EXPECT_NEAR(loss.tensor().item(), 1000.0f / 2.0f, 1e-3f);
  loss.backward();
  const std::vector<float> grad = logits.grad().toVector();
  // d/dlogits = (softmax - onehot) / N: row 0 puts +1/2 on class 0 and -1/2 on its label.
  const std::vector<float> expected = {0.5f, -0.5f, 0.0f, 0.0f, 0.0f, 0.0f};
  for (size_t i = 0; i < grad.size(); ++i) {
    EXPECT_TRUE(std::isfinite(grad[i]));
    EXPECT_NEAR(grad[i], expected[i], 1e-6f) << "element " << i;
  }
}

TEST(SoftmaxCrossEntropy, LargeBatchesTakeTheParallelPathAndAgreeWithDouble) {
  // 512 x 100 elements is past the kernel's OpenMP threshold; compare with a double-precision
  // computation of the same formula.
  const int64_t batch = 512;
  const int64_t classes = 100;
  const Tensor logitValues = testing::randomTensor({batch, classes}, 31, -20.0f, 20.0f);
  std::vector<int64_t> labelValues(batch);
  for (int64_t n = 0; n < batch; ++n) labelValues[n] = (n * 37) % classes;
  Variable logits(logitValues, true);
  Variable loss = autograd::softmaxCrossEntropy(logits, labelsOf(labelValues));
  loss.backward();

  const float* x = logitValues.data<float>();
  const float* grad = logits.grad().data<float>();
  double expectedLoss = 0;
  std::vector<float> expectedGrad(static_cast<size_t>(batch * classes));
  for (int64_t n = 0; n < batch; ++n) {
    const float* row = x + n * classes;
    double rowMax = row[0];
    for (int64_t c = 1; c < classes; ++c) rowMax = std::max<double>(rowMax, row[c]);
    double denominator = 0;
    for (int64_t c = 0; c < classes; ++c) denominator += std::exp(row[c] - rowMax);
    expectedLoss += std::log(denominator) + rowMax - row[labelValues[n]];
    for (int64_t c = 0; c < classes; ++c) {
      const double probability = std::exp(row[c] - rowMax) / denominator;
      const double expected = (probability - (c == labelValues[n] ? 1.0 : 0.0)) / batch;
      expectedGrad[n * classes + c] = static_cast<float>(expected);
    }
  }
  expectedLoss /= batch;
  EXPECT_NEAR(loss.tensor().item(), expectedLoss, 1e-4 * expectedLoss);
  EXPECT_TRUE(testing::allClose(std::span(grad, expectedGrad.size()), expectedGrad, 0.0, 1e-7,
                                "d loss / d logits"));
}

TEST(SoftmaxCrossEntropy, UniformLogitsGiveLogC) {
  Variable loss =
      autograd::softmaxCrossEntropy(Variable(Tensor::zeros({3, 10}), false), labelsOf({0, 5, 9}));
  EXPECT_NEAR(loss.tensor().item(), std::log(10.0f), 1e-6f);
  EXPECT_FALSE(loss.requiresGrad());
}

TEST(SoftmaxCrossEntropy, RecordsNoGraphUnderNoGrad) {
  Variable logits(testing::randomTensor({2, 4}, 3), true);
  autograd::NoGradGuard noGrad;
  Variable loss = autograd::softmaxCrossEntropy(logits, labelsOf({0, 3}));
  EXPECT_FALSE(loss.requiresGrad());
}

TEST(SoftmaxCrossEntropy, RejectsLabelsThatAreNotInt64) {
  Variable logits(Tensor::zeros({4, 3}), true);
  const std::string message = errorMessage([&] {
    autograd::softmaxCrossEntropy(logits, floats({0, 1, 2, 0}, {4}));
  });
  expectContains(message, "softmaxCrossEntropy: labels must be int64 [N], got float32[4]");
  const std::string int32Message = errorMessage([&] {
    autograd::softmaxCrossEntropy(logits,
                                  Tensor::fromVector(std::vector<int32_t>{0, 1, 2, 0}, {4}));
  });
  expectContains(int32Message, "got int32[4]");
}

TEST(SoftmaxCrossEntropy, RejectsLabelsOutOfRangeNamingIndexAndValue) {
  Variable logits(Tensor::zeros({4, 3}), true);
  const std::string tooLarge = errorMessage([&] {
    autograd::softmaxCrossEntropy(logits, labelsOf({0, 1, 7, 2}));
  });
  expectContains(tooLarge, "labels[2] = 7");
  expectContains(tooLarge, "[0, 3)");
  const std::string negative = errorMessage([&] {
    autograd::softmaxCrossEntropy(logits, labelsOf({0, -1, 1, 2}));
  });
  expectContains(negative, "labels[1] = -1");
}

TEST(SoftmaxCrossEntropy, RejectsLogitsThatAreNot2D) {
  const std::string message = errorMessage([&] {
    autograd::softmaxCrossEntropy(Variable(Tensor::zeros({2, 3, 4}), true), labelsOf({0, 1}));
  });
  expectContains(message,
                 "softmaxCrossEntropy: logits must be float32 [N, C], got float32[2, 3, 4]");
}

TEST(SoftmaxCrossEntropy, RejectsBatchSizeMismatch) {
  const std::string message = errorMessage([&] {
    autograd::softmaxCrossEntropy(Variable(Tensor::zeros({4, 3}), true), labelsOf({0, 1, 2}));
  });
  expectContains(message, "float32[4, 3]");
  expectContains(message, "int64[3]");
  expectContains(message, "batch size");
}

TEST(SoftmaxCrossEntropy, RejectsLabelsThatAreNot1D) {
  const std::string message = errorMessage([&] {
    autograd::softmaxCrossEntropy(Variable(Tensor::zeros({2, 3}), true),
                                  Tensor::fromVector(std::vector<int64_t>{0, 1}, {2, 1}));
  });
  expectContains(message, "labels must be int64 [N], got int64[2, 1]");
}

// ---- logSoftmax ------------------------------------------------------------------------------

class LogSoftmaxReference : public ::testing::TestWithParam<std::string> {};

TEST_P(LogSoftmaxReference, ForwardAndBackwardMatchPyTorch) {
  const testing::ReferenceCase reference = testing::loadReferenceCase("loss.json", GetParam());
  Variable input(reference.tensor("input"), true);
  Variable output = autograd::logSoftmax(input, reference.options().at("dim").get<int64_t>());
  testing::expectAllClose(output.tensor(), reference.tensor("output"), 1e-5f, 1e-5f, "output");
  output.backward(reference.tensor("grad_output"));
  testing::expectAllClose(input.grad(), reference.tensor("grad_input"), 1e-4f, 1e-6f, "grad_input");
}

INSTANTIATE_TEST_SUITE_P(Cases, LogSoftmaxReference,
                         ::testing::Values("log_softmax_2d_dim1", "log_softmax_3d_dim0",
                                           "log_softmax_3d_dim_minus2", "log_softmax_4d_last",
                                           "log_softmax_1d", "log_softmax_large"),
                         [](const auto& info) { return info.param; });

TEST(LogSoftmax, MatchesFiniteDifferencesOverEveryDimension) {
  for (int64_t dim : {0, 1, 2, -1, -3}) {
    SCOPED_TRACE("dim " + std::to_string(dim));
    testing::expectGradientsMatchFiniteDifferences(
        [&](const std::vector<Variable>& in) { return autograd::logSoftmax(in[0], dim); },
        {Variable(testing::randomTensor({3, 4, 5}, 60 + dim, -2.0f, 2.0f), true)});
  }
}

TEST(LogSoftmax, EachLineExponentiatesToOne) {
  // Over dim 1 of [2, 3, 4]: for every (n, k), sum over c of exp(output[n, c, k]) is 1, and
  // adding a constant to a line changes nothing.
  const Tensor values = testing::randomTensor({2, 3, 4}, 70, -5.0f, 5.0f);
  const std::vector<float> out = autograd::logSoftmax(Variable(values), 1).tensor().toVector();
  for (int64_t n = 0; n < 2; ++n) {
    for (int64_t k = 0; k < 4; ++k) {
      double total = 0;
      for (int64_t c = 0; c < 3; ++c) total += std::exp(out[(n * 3 + c) * 4 + k]);
      EXPECT_NEAR(total, 1.0, 1e-6) << "line n " << n << " k " << k;
    }
  }
}

TEST(LogSoftmax, StaysFiniteForExtremeInputs) {
  // Row 0 spans +-1e4 (exp overflows without the max shift, and log of its underflowed
  // probabilities is -inf without the log-sum-exp form); row 1 is uniform far below zero.
  Variable input(floats({1e4f, -1e4f, 0.0f, -30.0f, -30.0f, -30.0f}, {2, 3}), true);
  Variable output = autograd::logSoftmax(input, -1);
  const std::vector<float> values = output.tensor().toVector();
  const std::vector<float> expected = {
      0.0f, -2e4f, -1e4f, -std::log(3.0f), -std::log(3.0f), -std::log(3.0f)};
  for (size_t i = 0; i < values.size(); ++i) {
    EXPECT_TRUE(std::isfinite(values[i])) << "element " << i;
    EXPECT_NEAR(values[i], expected[i], 1e-3f) << "element " << i;
  }
  output.backward(Tensor::full({2, 3}, 1.0f));
  // d/dx of sum(log softmax) = 1 - C softmax: row 0 is one-hot, row 1 uniform.
  const std::vector<float> grad = input.grad().toVector();
  const std::vector<float> expectedGrad = {-2.0f, 1.0f, 1.0f, 0.0f, 0.0f, 0.0f};
  for (size_t i = 0; i < grad.size(); ++i) EXPECT_NEAR(grad[i], expectedGrad[i], 1e-5f) << i;
}

TEST(LogSoftmax, LargeInputsTakeTheParallelPathAndAgreeWithDouble) {
  // [300, 150] over dim 0 (strided lines): past the OpenMP threshold.
  const Tensor values = testing::randomTensor({300, 150}, 71, -10.0f, 10.0f);
  const std::vector<float> out = autograd::logSoftmax(Variable(values), 0).tensor().toVector();
  const float* x = values.data<float>();
  std::vector<float> expected(out.size());
  for (int64_t k = 0; k < 150; ++k) {
    double lineMax = x[k];
    for (int64_t r = 1; r < 300; ++r) lineMax = std::max<double>(lineMax, x[r * 150 + k]);
    double total = 0;
    for (int64_t r = 0; r < 300; ++r) total += std::exp(x[r * 150 + k] - lineMax);
    for (int64_t r = 0; r < 300; ++r) {
      expected[r * 150 + k] = static_cast<float>(x[r * 150 + k] - lineMax - std::log(total));
    }
  }
  EXPECT_TRUE(testing::allClose(out, expected, 1e-5, 1e-5, "logSoftmax over dim 0"));
}

TEST(LogSoftmax, RejectsADimensionOutOfRange) {
  Variable input(Tensor::zeros({2, 3}), true);
  expectContains(errorMessage([&] { autograd::logSoftmax(input, 2); }),
                 "logSoftmax: dimension 2 is out of range for float32[2, 3] (expected [-2, 1])");
  expectContains(errorMessage([&] { autograd::logSoftmax(input, -3); }),
                 "logSoftmax: dimension -3 is out of range");
}

// ---- crossEntropy with options -------------------------------------------------------------

Reduction reductionNamed(const std::string& name) {
  if (name == "none") return Reduction::None;
  if (name == "sum") return Reduction::Sum;
  EXPECT_EQ(name, "mean");
  return Reduction::Mean;
}

autograd::CrossEntropyOptions optionsOf(const testing::ReferenceCase& reference) {
  const auto& json = reference.options();
  autograd::CrossEntropyOptions options;
  if (json.at("weighted").get<bool>()) options.weight = reference.tensor("weight");
  options.ignoreIndex = json.at("ignore_index").get<int64_t>();
  options.labelSmoothing = json.at("label_smoothing").get<float>();
  options.reduction = reductionNamed(json.at("reduction").get<std::string>());
  return options;
}

class CrossEntropyReference : public ::testing::TestWithParam<std::string> {};

TEST_P(CrossEntropyReference, ForwardAndBackwardMatchPyTorch) {
  const testing::ReferenceCase reference = testing::loadReferenceCase("loss.json", GetParam());
  const autograd::CrossEntropyOptions options = optionsOf(reference);
  Variable logits(reference.tensor("logits"), true);
  Variable loss = autograd::crossEntropy(logits, reference.tensor("labels"), options);
  testing::expectAllClose(loss.tensor(), reference.tensor("loss"), 1e-5f, 1e-6f, "loss");
  if (options.reduction == Reduction::None) {
    loss.backward(reference.tensor("grad_loss"));
  } else {
    loss.backward();
  }
  testing::expectAllClose(logits.grad(), reference.tensor("grad_logits"), 1e-4f, 1e-7f,
                          "grad_logits");
}

INSTANTIATE_TEST_SUITE_P(
    Cases, CrossEntropyReference,
    ::testing::Values("ce_weight_mean", "ce_weight_sum", "ce_none", "ce_weight_none",
                      "ce_ignore_mean", "ce_ignore_weight_mean", "ce_ignore_class_index",
                      "ce_ignore_sum", "ce_smoothing_mean", "ce_smoothing_sum",
                      "ce_smoothing_weight_mean", "ce_smoothing_weight_ignore_mean",
                      "ce_smoothing_ignore_mean", "ce_smoothing_weight_ignore_none",
                      "ce_all_options_large", "ce_default_options"),
    [](const auto& info) { return info.param; });

TEST(CrossEntropy, MatchesFiniteDifferencesWithEveryOption) {
  const Tensor labels = labelsOf({2, -100, 4, 1, 3, 3, -100});
  autograd::CrossEntropyOptions options;
  options.weight = floats({0.5f, 1.5f, 1.0f, 2.0f, 0.25f});
  options.labelSmoothing = 0.2f;
  for (Reduction reduction : {Reduction::Mean, Reduction::Sum, Reduction::None}) {
    SCOPED_TRACE(static_cast<int>(reduction));
    options.reduction = reduction;
    testing::expectGradientsMatchFiniteDifferences(
        [&](const std::vector<Variable>& in) {
          return autograd::crossEntropy(in[0], labels, options);
        },
        {Variable(testing::randomTensor({7, 5}, 80, -2.0f, 2.0f), true)});
  }
}

TEST(CrossEntropy, DefaultOptionsGiveTheFusedLossBitForBit) {
  const Tensor labels = labelsOf({2, 0, 4, 1, 3, 3});
  const Tensor values = testing::randomTensor({6, 5}, 81, -3.0f, 3.0f);
  Variable fused(values.clone(), true);
  Variable viaOptions(values.clone(), true);
  Variable expected = autograd::softmaxCrossEntropy(fused, labels);
  Variable actual = autograd::crossEntropy(viaOptions, labels);
  EXPECT_EQ(actual.tensor().toVector(), expected.tensor().toVector());
  expected.backward();
  actual.backward();
  EXPECT_EQ(viaOptions.grad().toVector(), fused.grad().toVector());
}

TEST(CrossEntropy, TheComposedPathAgreesWithTheFusedOneWhenNothingIsIgnored) {
  // Sum reduction takes logSoftmax + the loss kernel; divided by N it is the fused mean.
  const Tensor labels = labelsOf({1, 0, 2, 2});
  const Tensor values = testing::randomTensor({4, 3}, 82, -3.0f, 3.0f);
  autograd::CrossEntropyOptions options;
  options.reduction = Reduction::Sum;
  const float summed = autograd::crossEntropy(Variable(values), labels, options).tensor().item();
  const float fused = autograd::softmaxCrossEntropy(Variable(values), labels).tensor().item();
  EXPECT_NEAR(summed / 4.0f, fused, 1e-6f);
}

TEST(CrossEntropy, IgnoredSamplesAddNothingAndAreNotCounted) {
  // Rows 1 and 3 ignored: the mean is that of rows 0 and 2 alone, and their gradient is zero.
  const Tensor values = testing::randomTensor({4, 3}, 83, -3.0f, 3.0f);
  Variable logits(values, true);
  Variable loss = autograd::crossEntropy(logits, labelsOf({1, -100, 2, -100}));
  const std::vector<float> x = values.toVector();
  auto rowLoss = [&](int64_t row, int64_t label) {
    double total = 0;
    for (int64_t c = 0; c < 3; ++c) total += std::exp(x[row * 3 + c]);
    return std::log(total) - x[row * 3 + label];
  };
  EXPECT_NEAR(loss.tensor().item(), (rowLoss(0, 1) + rowLoss(2, 2)) / 2.0, 1e-5);
  loss.backward();
  const std::vector<float> grad = logits.grad().toVector();
  for (int64_t c = 0; c < 3; ++c) {
    EXPECT_EQ(grad[3 + c], 0.0f);
    EXPECT_EQ(grad[9 + c], 0.0f);
  }
  EXPECT_NE(grad[0], 0.0f);
}

TEST(CrossEntropy, EveryLabelIgnoredGivesNaNAsInPyTorch) {
  Variable loss = autograd::crossEntropy(Variable(Tensor::zeros({2, 3})), labelsOf({-100, -100}));
  EXPECT_TRUE(std::isnan(loss.tensor().item()));
}

TEST(CrossEntropy, RejectsLabelsOutOfRangeNamingLabelAndClassCount) {
  Variable logits(Tensor::zeros({4, 3}), true);
  const std::string tooLarge = errorMessage([&] {
    autograd::crossEntropy(logits, labelsOf({0, 1, 7, 2}));
  });
  expectContains(tooLarge, "crossEntropy: labels[2] = 7 is out of range for 3 classes");
  expectContains(tooLarge, "[0, 3) or the ignore index -100");
  autograd::CrossEntropyOptions options;
  options.ignoreIndex = 1;
  options.weight = floats({1, 2, 3});
  // -100 is a label like any other once the ignore index is 1.
  expectContains(errorMessage([&] {
                   autograd::crossEntropy(logits, labelsOf({0, -100, 1, 2}), options);
                 }),
                 "crossEntropy: labels[1] = -100 is out of range for 3 classes");
}

TEST(CrossEntropy, RejectsBadWeightsAndSmoothing) {
  Variable logits(Tensor::zeros({2, 3}), true);
  autograd::CrossEntropyOptions options;
  options.weight = floats({1, 2});
  expectContains(errorMessage([&] {
                   autograd::crossEntropy(logits, labelsOf({0, 1}), options);
                 }),
                 "crossEntropy: weight float32[2] must be float32 [3], one per class");
  options.weight = Tensor();
  options.labelSmoothing = 1.5f;
  expectContains(errorMessage([&] {
                   autograd::crossEntropy(logits, labelsOf({0, 1}), options);
                 }),
                 "crossEntropy: label smoothing 1.5 is outside [0, 1]");
  expectContains(errorMessage([&] {
                   autograd::crossEntropy(Variable(Tensor::zeros({2, 3, 4})), labelsOf({0, 1}));
                 }),
                 "crossEntropy: logits must be float32 [N, C], got float32[2, 3, 4]");
}

}  // namespace
}  // namespace imerge
