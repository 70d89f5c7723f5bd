// The one comparison every equivalence test uses: values imerge computed against a reference
// (PyTorch's, the CPU kernels', one process's training), for single tensors and for a model's
// whole parameter set. Two rules of closeness:
//
//   allClose      element by element, |actual - expected| <= atol + rtol * |expected|
//                 (numpy.allclose's rule);
//   closeToScale  max |actual - expected| <= tolerance * max |expected| over the tensor, for
//                 results whose sums ran in another order (an element near zero would be judged
//                 by its own tiny size under an element-wise relative rule).
//
// Both fail, naming the tensor and the flat index, when either operand holds a NaN or an
// infinity: a comparison of the form max(worst, d) or d <= bound is false or unchanged for a
// NaN d, which is how a replica whose parameters are all NaN used to pass. Sizes that differ
// fail too. A parameter set with no tensors fails: a check over nothing cannot fail.
//
// They return ::testing::AssertionResult, so a test writes EXPECT_TRUE(closeToScale(...)) and
// the helper's own test can check a refusal and its message. On success the message carries
// the largest difference found, for tests that print it.
#pragma once

#include <gtest/gtest.h>

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/tensor.h"

namespace imerge::testing {

::testing::AssertionResult allClose(std::span<const float> actual, std::span<const float> expected,
                                    double rtol, double atol, std::string_view what);
// The same for tensors on any device (copied to the host), whose shapes must be equal.
::testing::AssertionResult allClose(const Tensor& actual, const Tensor& expected, double rtol,
                                    double atol, std::string_view what);

::testing::AssertionResult closeToScale(std::span<const float> actual,
                                        std::span<const float> expected, double tolerance,
                                        std::string_view what);
::testing::AssertionResult closeToScale(const Tensor& actual, const Tensor& expected,
                                        double tolerance, std::string_view what);

// closeToScale for each pair of corresponding tensors of two parameter sets (as
// parameterValues returns them); `names`, when given, name the tensors in messages.
::testing::AssertionResult parametersCloseToScale(const std::vector<std::vector<float>>& actual,
                                                  const std::vector<std::vector<float>>& expected,
                                                  double tolerance, std::string_view what,
                                                  const std::vector<std::string>& names = {});

// For a test with a rule of closeness of its own (support/gpu_test.h's callers with a bound per
// element): success when both operands have the same size and only finite values.
::testing::AssertionResult sameSizeAndFinite(std::span<const float> actual,
                                             std::span<const float> expected,
                                             std::string_view what);

// The EXPECT forms most tests use.
inline void expectAllClose(const Tensor& actual, const Tensor& expected, float rtol, float atol,
                           const std::string& what) {
  EXPECT_TRUE(allClose(actual, expected, rtol, atol, what));
}

// A CUDA kernel's (or its host replay's) values against the CPU kernel's on the same inputs:
// |actual - expected| <= tolerance + tolerance * |expected|.
inline void expectClose(const std::vector<float>& actual, const Tensor& expected,
                        const std::string& what = "", float tolerance = 1e-4f) {
  EXPECT_TRUE(allClose(actual, expected.toVector(), tolerance, tolerance, what));
}

}  // namespace imerge::testing
