// softmaxCrossEntropy: forward and backward against PyTorch (tests/reference/torch_loss.py),
// finite differences, numerical stability at large logits, and the messages bad inputs get.
#include "autograd/ops/loss.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <span>
#include <string>
#include <vector>

#include "autograd/grad_mode.h"
#include "autograd/ops/elementwise.h"
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

}  // namespace
}  // namespace imerge
