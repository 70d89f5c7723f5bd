// The rules by which the CUDA convolution picks an algorithm from cuDNN's search results and
// sizes the search's workspace (core/gpu_policy/conv_algorithm_choice.h). Plain C++: runs
// everywhere.
#include "core/gpu_policy/conv_algorithm_choice.h"

#include <gtest/gtest.h>

#include <vector>

#include "support/error_text.h"

namespace imerge::cuda {
namespace {

AlgorithmTrial trial(int algorithm, float milliseconds, size_t bytes, bool deterministic = true,
                     bool fmaMath = true, bool succeeded = true) {
  AlgorithmTrial t;
  t.algorithm = algorithm;
  t.succeeded = succeeded;
  t.milliseconds = milliseconds;
  t.workspaceBytes = bytes;
  t.deterministic = deterministic;
  t.fmaMath = fmaMath;
  return t;
}

AlgorithmRequirements anyWithin(size_t limitBytes) {
  AlgorithmRequirements requirements;
  requirements.workspaceLimitBytes = limitBytes;
  return requirements;
}

TEST(ConvAlgorithmChoice, TakesTheFastestThatSucceeded) {
  // Not sorted by time, so the rule cannot lean on cuDNN's ordering.
  const std::vector<AlgorithmTrial> trials = {trial(0, 3.0f, 0), trial(1, 1.0f, 100),
                                              trial(2, 0.5f, 0, true, true, /*succeeded=*/false),
                                              trial(6, 2.0f, 0)};
  EXPECT_EQ(chooseAlgorithm(trials, anyWithin(1000)), 1u);
}

TEST(ConvAlgorithmChoice, SkipsAlgorithmsAboveTheWorkspaceLimit) {
  const std::vector<AlgorithmTrial> trials = {trial(5, 0.1f, 4096), trial(1, 0.2f, 1024),
                                              trial(0, 0.9f, 0)};
  EXPECT_EQ(chooseAlgorithm(trials, anyWithin(4096)), 0u);  // the limit itself is allowed
  EXPECT_EQ(chooseAlgorithm(trials, anyWithin(4095)), 1u);
  EXPECT_EQ(chooseAlgorithm(trials, anyWithin(0)), 2u);
}

TEST(ConvAlgorithmChoice, DeterministicModeKeepsOnlyDeterministicAlgorithms) {
  const std::vector<AlgorithmTrial> trials = {trial(3, 0.1f, 0, /*deterministic=*/false),
                                              trial(1, 0.4f, 0, /*deterministic=*/true)};
  EXPECT_EQ(chooseAlgorithm(trials, anyWithin(0)), 0u);
  AlgorithmRequirements requirements = anyWithin(0);
  requirements.deterministic = true;
  EXPECT_EQ(chooseAlgorithm(trials, requirements), 1u);
}

TEST(ConvAlgorithmChoice, StrictFloat32KeepsOnlyFmaMath) {
  const std::vector<AlgorithmTrial> trials = {trial(1, 0.1f, 0, true, /*fmaMath=*/false),
                                              trial(1, 0.3f, 0, true, /*fmaMath=*/true)};
  EXPECT_EQ(chooseAlgorithm(trials, anyWithin(0)), 0u);
  AlgorithmRequirements requirements = anyWithin(0);
  requirements.fmaMathOnly = true;
  EXPECT_EQ(chooseAlgorithm(trials, requirements), 1u);
}

TEST(ConvAlgorithmChoice, EquallyFastKeepsTheFirst) {
  const std::vector<AlgorithmTrial> trials = {trial(4, 1.0f, 0), trial(2, 1.0f, 0)};
  EXPECT_EQ(chooseAlgorithm(trials, anyWithin(0)), 0u);
}

TEST(ConvAlgorithmChoice, NoneQualifyingIsReportedAndDescribed) {
  const std::vector<AlgorithmTrial> trials = {trial(0, 1.0f, 0, /*deterministic=*/false),
                                              trial(7, 0.5f, 1 << 20),
                                              trial(2, 0.0f, 0, true, true, /*succeeded=*/false)};
  AlgorithmRequirements requirements = anyWithin(1024);
  requirements.deterministic = true;
  EXPECT_FALSE(chooseAlgorithm(trials, requirements).has_value());
  EXPECT_FALSE(chooseAlgorithm({}, anyWithin(1 << 30)).has_value());

  const std::string text = describeTrials(trials);
  testing::expectContains(text, "algorithm 0: 1 ms, 0 bytes, non-deterministic, FMA math");
  testing::expectContains(text, "algorithm 7: 0.5 ms, 1048576 bytes, deterministic");
  testing::expectContains(text, "algorithm 2: failed");
  EXPECT_EQ(describeTrials({}), "cuDNN reported no algorithm");
}

TEST(ConvAlgorithmChoice, SearchWorkspaceIsTheLargestAskCappedByTheLimit) {
  EXPECT_EQ(firstSearchWorkspaceBytes(size_t{1} << 30, 12345), 12345u);
  EXPECT_EQ(firstSearchWorkspaceBytes(4096, size_t{1} << 40), 4096u);
  EXPECT_EQ(firstSearchWorkspaceBytes(0, 100), 0u);
}

TEST(ConvAlgorithmChoice, SmallerWorkspacesHalveDownToZero) {
  constexpr size_t kMiB = size_t{1} << 20;
  EXPECT_EQ(nextSearchWorkspaceBytes(8 * kMiB), 4 * kMiB);
  EXPECT_EQ(nextSearchWorkspaceBytes(2 * kMiB), kMiB);
  EXPECT_EQ(nextSearchWorkspaceBytes(2 * kMiB - 2), 0u);  // half would be below 1 MiB
  EXPECT_EQ(nextSearchWorkspaceBytes(kMiB), 0u);
  EXPECT_EQ(nextSearchWorkspaceBytes(0), 0u);
  // From the largest limit the retries end at zero after a few dozen steps, never looping.
  size_t bytes = ~size_t{0};
  int steps = 0;
  while (bytes > 0) {
    const size_t next = nextSearchWorkspaceBytes(bytes);
    ASSERT_LT(next, bytes);
    bytes = next;
    ++steps;
  }
  EXPECT_LE(steps, 64);
}

}  // namespace
}  // namespace imerge::cuda
