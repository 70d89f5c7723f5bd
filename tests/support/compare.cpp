#include "support/compare.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <sstream>

namespace imerge::testing {
namespace {

// The first NaN or infinity in either operand, as a refusal naming it, or nothing.
std::optional<::testing::AssertionResult> nonFiniteIn(std::span<const float> actual,
                                                      std::span<const float> expected,
                                                      std::string_view what) {
  for (const auto& [values, role] :
       {std::pair{actual, "actual"}, std::pair{expected, "expected"}}) {
    const auto found = std::find_if(values.begin(), values.end(),
                                    [](float value) { return !std::isfinite(value); });
    if (found != values.end()) {
      return ::testing::AssertionFailure()
             << what << ": element " << (found - values.begin()) << " of the " << role
             << " values is " << *found << " (of " << values.size()
             << "); a comparison with a non-finite value proves nothing";
    }
  }
  return std::nullopt;
}

std::optional<::testing::AssertionResult> sizesDiffer(std::span<const float> actual,
                                                      std::span<const float> expected,
                                                      std::string_view what) {
  if (actual.size() == expected.size()) return std::nullopt;
  return ::testing::AssertionFailure()
         << what << ": " << actual.size() << " actual values, " << expected.size() << " expected";
}

std::optional<::testing::AssertionResult> shapesDiffer(const Tensor& actual, const Tensor& expected,
                                                       std::string_view what) {
  if (!actual.defined() || !expected.defined()) {
    return ::testing::AssertionFailure()
           << what << ": the " << (actual.defined() ? "expected" : "actual")
           << " tensor is undefined";
  }
  if (actual.shape() == expected.shape()) return std::nullopt;
  return ::testing::AssertionFailure()
         << what << ": shape " << actual.describe() << ", expected " << expected.describe();
}

// max |actual - expected| relative to max |expected|, where it is largest. An all-zero reference
// is matched only by zeros (up to a denormal's size).
struct ScaleDifference {
  double relative = 0;
  double scale = 0;
  size_t worst = 0;
};

ScaleDifference scaleDifference(std::span<const float> actual, std::span<const float> expected) {
  ScaleDifference found;
  double worstDifference = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    found.scale = std::max(found.scale, std::fabs(static_cast<double>(expected[i])));
    const double difference = std::fabs(static_cast<double>(actual[i]) - expected[i]);
    if (difference > worstDifference) {
      worstDifference = difference;
      found.worst = i;
    }
  }
  found.relative = worstDifference / std::max(found.scale, 1e-30);
  return found;
}

}  // namespace

::testing::AssertionResult sameSizeAndFinite(std::span<const float> actual,
                                             std::span<const float> expected,
                                             std::string_view what) {
  if (auto refusal = sizesDiffer(actual, expected, what)) return *refusal;
  if (auto refusal = nonFiniteIn(actual, expected, what)) return *refusal;
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult allClose(std::span<const float> actual, std::span<const float> expected,
                                    double rtol, double atol, std::string_view what) {
  if (auto refusal = sizesDiffer(actual, expected, what)) return *refusal;
  if (auto refusal = nonFiniteIn(actual, expected, what)) return *refusal;
  size_t failures = 0, worst = 0;
  double worstExcess = 0, largestError = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    const double error = std::fabs(static_cast<double>(actual[i]) - expected[i]);
    const double excess = error - (atol + rtol * std::fabs(static_cast<double>(expected[i])));
    largestError = std::max(largestError, error);
    if (excess > 0) {
      if (failures == 0 || excess > worstExcess) {
        worst = i;
        worstExcess = excess;
      }
      ++failures;
    }
  }
  if (failures == 0) {
    return ::testing::AssertionSuccess()
           << what << ": " << actual.size() << " elements, largest difference " << largestError;
  }
  return ::testing::AssertionFailure()
         << what << ": " << failures << " of " << actual.size()
         << " elements differ; the worst is element " << worst << ": actual " << actual[worst]
         << ", expected " << expected[worst] << " (rtol " << rtol << ", atol " << atol << ")";
}

::testing::AssertionResult allClose(const Tensor& actual, const Tensor& expected, double rtol,
                                    double atol, std::string_view what) {
  if (auto refusal = shapesDiffer(actual, expected, what)) return *refusal;
  return allClose(actual.toVector(), expected.toVector(), rtol, atol, what);
}

::testing::AssertionResult closeToScale(std::span<const float> actual,
                                        std::span<const float> expected, double tolerance,
                                        std::string_view what) {
  if (auto refusal = sizesDiffer(actual, expected, what)) return *refusal;
  if (auto refusal = nonFiniteIn(actual, expected, what)) return *refusal;
  const ScaleDifference found = scaleDifference(actual, expected);
  if (found.relative <= tolerance) {
    return ::testing::AssertionSuccess()
           << what << ": largest relative difference " << found.relative << " over "
           << actual.size() << " elements";
  }
  return ::testing::AssertionFailure()
         << what << ": element " << found.worst << " is " << actual[found.worst] << ", expected "
         << expected[found.worst] << ": " << found.relative << " of the largest |expected| "
         << found.scale << ", above " << tolerance;
}

::testing::AssertionResult closeToScale(const Tensor& actual, const Tensor& expected,
                                        double tolerance, std::string_view what) {
  if (auto refusal = shapesDiffer(actual, expected, what)) return *refusal;
  return closeToScale(actual.toVector(), expected.toVector(), tolerance, what);
}

::testing::AssertionResult parametersCloseToScale(const std::vector<std::vector<float>>& actual,
                                                  const std::vector<std::vector<float>>& expected,
                                                  double tolerance, std::string_view what,
                                                  const std::vector<std::string>& names) {
  if (expected.empty()) {
    return ::testing::AssertionFailure() << what << ": no parameters to compare";
  }
  if (actual.size() != expected.size()) {
    return ::testing::AssertionFailure()
           << what << ": " << actual.size() << " parameter tensors, expected " << expected.size();
  }
  double worst = 0;
  for (size_t t = 0; t < expected.size(); ++t) {
    std::ostringstream tensor;
    tensor << what << ", parameter " << t;
    if (t < names.size()) tensor << " (" << names[t] << ")";
    ::testing::AssertionResult result =
        closeToScale(actual[t], expected[t], tolerance, tensor.str());
    if (!result) return result;
    worst = std::max(worst, scaleDifference(actual[t], expected[t]).relative);
  }
  return ::testing::AssertionSuccess()
         << what << ": " << expected.size() << " parameter tensors, largest relative difference "
         << worst;
}

}  // namespace imerge::testing
