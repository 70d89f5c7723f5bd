// The comparison helper every equivalence test uses (support/compare.h), shown able to refuse:
// NaN and infinity on either side, sizes and shapes that differ, and a parameter set with
// nothing in it; and to accept what is close by each rule, with the difference it found.
#include "support/compare.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "support/error_text.h"

namespace imerge::testing {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

const std::vector<float> kWant = {1, 2, 3, 4};

TEST(Compare, CloseValuesPassBothRules) {
  const std::vector<float> got = {1, 2.000001f, 3, 4};
  EXPECT_TRUE(allClose(got, kWant, 1e-5, 0, "x"));
  const ::testing::AssertionResult result = closeToScale(got, kWant, 1e-6, "x");
  EXPECT_TRUE(result);
  expectContains(result.message(), "largest relative difference 2.38");  // 2.000001f is 2 + 9.5e-7
}

TEST(Compare, ADifferenceBeyondTheToleranceFailsNamingTheElement) {
  const std::vector<float> got = {1, 2, 3.1f, 4};
  const ::testing::AssertionResult elementwise = allClose(got, kWant, 1e-3, 0, "logits");
  EXPECT_FALSE(elementwise);
  expectContains(elementwise.message(), "logits: 1 of 4 elements differ; the worst is element 2");
  const ::testing::AssertionResult scaled = closeToScale(got, kWant, 1e-3, "logits");
  EXPECT_FALSE(scaled);
  expectContains(scaled.message(), "logits: element 2 is 3.0999999046325684, expected 3: 0.0249");
}

// The case that used to pass: {1, NaN, 3, 4} against {1, 2, 3, 4}, whether the NaN comes first
// or a later, larger difference follows it.
TEST(Compare, NaNOnEitherSideFailsNamingTheIndex) {
  for (const std::vector<float>& got :
       {std::vector<float>{1, kNaN, 3, 4}, std::vector<float>{1, kNaN, 3, 40}}) {
    for (const ::testing::AssertionResult& result :
         {allClose(got, kWant, 1e9, 1e9, "w"), closeToScale(got, kWant, 1e9, "w")}) {
      EXPECT_FALSE(result);
      expectContains(result.message(), "w: element 1 of the actual values is nan");
    }
  }
  const std::vector<float> nanWanted = {1, 2, 3, kNaN};
  EXPECT_FALSE(allClose(kWant, nanWanted, 1e9, 1e9, "w"));
  expectContains(closeToScale(kWant, nanWanted, 1e9, "w").message(),
                 "w: element 3 of the expected values is nan");
  // NaN against NaN is no agreement either.
  EXPECT_FALSE(closeToScale(nanWanted, nanWanted, 1e9, "w"));
}

TEST(Compare, InfinityOnEitherSideFails) {
  const std::vector<float> got = {1, 2, -kInf, 4};
  expectContains(allClose(got, kWant, 1e9, 1e9, "g").message(),
                 "g: element 2 of the actual values is -inf");
  const std::vector<float> infinite = {kInf, kInf, kInf, kInf};
  EXPECT_FALSE(closeToScale(infinite, infinite, 1e9, "g"));
  EXPECT_FALSE(allClose(infinite, infinite, 1e9, 1e9, "g"));
}

TEST(Compare, SizesAndShapesMustAgree) {
  const std::vector<float> three = {1, 2, 3};
  expectContains(allClose(three, kWant, 1, 1, "b").message(), "b: 3 actual values, 4 expected");
  EXPECT_FALSE(closeToScale(three, kWant, 1, "b"));
  EXPECT_FALSE(closeToScale(std::vector<float>{}, kWant, 1, "b"));
  const Tensor flat = Tensor::fromVector(kWant, {4}), square = Tensor::fromVector(kWant, {2, 2});
  expectContains(allClose(flat, square, 1, 1, "t").message(), "t: shape");
  EXPECT_FALSE(closeToScale(flat, Tensor(), 1, "t"));
  EXPECT_TRUE(closeToScale(square, square, 0, "t"));
}

// Two empty tensors are equal (a zero-sized shape is legitimate); an empty parameter set is
// a comparison of nothing, which must not count as agreement.
TEST(Compare, EmptyTensorsAgreeButAnEmptyParameterSetFails) {
  const std::vector<float> none;
  EXPECT_TRUE(allClose(none, none, 0, 0, "e"));
  EXPECT_TRUE(closeToScale(none, none, 0, "e"));
  const ::testing::AssertionResult nothing = parametersCloseToScale({}, {}, 1, "replica");
  EXPECT_FALSE(nothing);
  expectContains(nothing.message(), "replica: no parameters to compare");
}

// An all-zero reference is matched by zeros only: its scale gives no room.
TEST(Compare, AnAllZeroReferenceAdmitsOnlyZeros) {
  const std::vector<float> zeros(3, 0.0f), tiny = {0, 1e-20f, 0};
  EXPECT_TRUE(closeToScale(zeros, zeros, 0, "z"));
  EXPECT_FALSE(closeToScale(tiny, zeros, 1e-3, "z"));
}

TEST(Compare, ParameterSetsNameTheTensorAtFault) {
  const std::vector<std::vector<float>> want = {{1, 2}, {3, 4, 5}};
  const ::testing::AssertionResult same =
      parametersCloseToScale({{1, 2}, {3, 4, 5.00001f}}, want, 1e-5, "wfbp");
  EXPECT_TRUE(same);
  expectContains(same.message(), "wfbp: 2 parameter tensors, largest relative difference 2.0027");
  const ::testing::AssertionResult poisoned =
      parametersCloseToScale({{1, 2}, {3, kNaN, 5}}, want, 1e-5, "wfbp", {"fc.bias", "fc.weight"});
  EXPECT_FALSE(poisoned);
  expectContains(poisoned.message(),
                 "wfbp, parameter 1 (fc.weight): element 1 of the actual values is nan");
  expectContains(parametersCloseToScale({{1, 2}}, want, 1, "wfbp").message(),
                 "wfbp: 1 parameter tensors, expected 2");
}

}  // namespace
}  // namespace imerge::testing
