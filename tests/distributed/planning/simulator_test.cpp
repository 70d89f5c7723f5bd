// The simulator against timelines computed by hand (wfbp, default, fusion, priority with its
// overlap of the next forward pass), against fifoFinishTime on random plans, and the IMerge
// claim on the preset models: with a cluster whose small messages cost a flat startup, imerge
// is never slower than default, wfbp, fusion or mgwfbp at 16 and 32 workers.
#include "distributed/planning/simulator.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "distributed/planning/channel_schedule.h"
#include "distributed/planning/cluster_profile.h"
#include "distributed/planning/planner.h"
#include "support/error_text.h"

namespace imerge::distributed {
namespace {

using imerge::testing::errorMessage;
using imerge::testing::expectContains;

constexpr double kTolerance = 1e-9;

// Two tensors, backward 1 s each: r = {1, 2}; forward 1 s per tensor.
ComputeProfile twoTensors(size_t bytes0, size_t bytes1) {
  ComputeProfile profile;
  profile.tensors = {{"last.weight", bytes0, 1.0}, {"first.weight", bytes1, 1.0}};
  profile.forwardSecondsPerTensor = {1.0, 1.0};
  profile.batchPerWorker = 8;
  return profile;
}

// T(M) = 0.5 s + 0.01 s per byte: T(100) = 1.5, T(200) = 2.5, T(300) = 3.5.
const LinearCommModel kTruth(0.5, 0.01);

Plan planFor(const std::string& strategy, const std::vector<TensorInfo>& tensors,
             PlannerOptions options = {}) {
  return makePlanner(strategy, options)->plan(tensors, kTruth, 2);
}

TEST(Simulator, WfbpByHand) {
  const ComputeProfile profile = twoTensors(100, 200);
  const SimResult result = simulate(planFor("wfbp", profile.tensors), profile, kTruth, 2);
  // Forward [0, 2]; backward [2, 4]; bucket 0 [3, 4.5]; bucket 1 [4.5, 7]; wait [4, 7].
  EXPECT_NEAR(result.iterationSeconds, 7.0, kTolerance);
  EXPECT_NEAR(result.communicationSeconds, 4.0, kTolerance);
  EXPECT_NEAR(result.waitingSeconds, 3.0, kTolerance);
  EXPECT_NEAR(result.overlappedSeconds, 1.0, kTolerance);  // bucket 0 during backward
  EXPECT_NEAR(result.computeSeconds, 4.0, kTolerance);
  EXPECT_NEAR(result.singleWorkerIterationSeconds, 4.0, kTolerance);
  EXPECT_NEAR(result.speedup, 2 * 4.0 / 7.0, kTolerance);
  EXPECT_NEAR(result.scalingEfficiency, 4.0 / 7.0, kTolerance);
  EXPECT_NEAR(result.imagesPerSecond, 2 * 8 / 7.0, kTolerance);
  EXPECT_EQ(result.buckets, 2u);
}

TEST(Simulator, DefaultStartsAfterBackward) {
  const ComputeProfile profile = twoTensors(100, 200);
  const SimResult result = simulate(planFor("default", profile.tensors), profile, kTruth, 2);
  // Both buckets after backward ends at 4: [4, 5.5], [5.5, 8].
  EXPECT_NEAR(result.iterationSeconds, 8.0, kTolerance);
  EXPECT_NEAR(result.waitingSeconds, 4.0, kTolerance);
  EXPECT_NEAR(result.overlappedSeconds, 0.0, kTolerance);
}

TEST(Simulator, FusionOneBucket) {
  const ComputeProfile profile = twoTensors(100, 200);
  const Plan plan = planFor("fusion", profile.tensors, {.fusionBytes = 1000});
  ASSERT_EQ(plan.buckets.size(), 1u);
  const SimResult result = simulate(plan, profile, kTruth, 2);
  // One all-reduce of 300 bytes once backward has produced both: [4, 7.5].
  EXPECT_NEAR(result.iterationSeconds, 7.5, kTolerance);
  EXPECT_NEAR(result.communicationSeconds, 3.5, kTolerance);
}

TEST(Simulator, OptimizerAfterTheWait) {
  ComputeProfile profile = twoTensors(100, 200);
  profile.optimizerSeconds = 0.25;
  const SimResult result = simulate(planFor("wfbp", profile.tensors), profile, kTruth, 2);
  EXPECT_NEAR(result.iterationSeconds, 7.25, kTolerance);
  EXPECT_NEAR(result.singleWorkerIterationSeconds, 4.25, kTolerance);
}

TEST(Simulator, PriorityOverlapsTheNextForward) {
  // The last layer (tensor 0, backward first) is large; the first layer's forward is long.
  ComputeProfile profile = twoTensors(300, 100);
  profile.forwardSecondsPerTensor = {0.5, 3.0};
  // Slices of 100 bytes: tensor 0 in three slices (priority 1), tensor 1 in one (priority 0).
  const Plan plan = planFor("priority", profile.tensors, {.sliceElements = 25});
  ASSERT_EQ(plan.buckets.size(), 4u);
  SimOptions options;
  options.negotiatePrioritySlices = false;
  options.iterations = 4;
  const SimResult result = simulate(plan, profile, kTruth, 2, options);
  // Relative to a backward start P: slice 0a [1, 2.5]; tensor 1's slice (ready at 2) goes next
  // [2.5, 4]; 0b [4, 5.5]; 0c [5.5, 7]. The next forward starts at P + 2 (backward's end):
  // tensor 1's layer waits until 4 and runs to 7; tensor 0's layer finds its slices reduced at
  // 7 and runs to 7.5; then backward [7.5, 9.5]. An iteration lasts 7.5 (wfbp: 3.5 + 6 = 9.5).
  EXPECT_NEAR(result.iterationSeconds, 7.5, kTolerance);
  EXPECT_NEAR(result.waitingSeconds, 2.0, kTolerance);
  EXPECT_NEAR(result.communicationSeconds, 6.0, kTolerance);
  // Exposed: the sends inside the wait [P + 2, P + 4]: 0.5 of 0a and all of tensor 1's slice.
  EXPECT_NEAR(result.overlappedSeconds, 4.0, kTolerance);
  const SimResult wfbp = simulate(planFor("wfbp", profile.tensors), profile, kTruth, 2, options);
  EXPECT_NEAR(wfbp.iterationSeconds, 9.5, kTolerance);

  // The steady state is reached after the first iteration.
  options.iterations = 2;
  EXPECT_NEAR(simulate(plan, profile, kTruth, 2, options).iterationSeconds, 7.5, kTolerance);
}

TEST(Simulator, PriorityChargesTheAgreementRounds) {
  const ComputeProfile profile = twoTensors(100, 100);
  const Plan plan = planFor("priority", profile.tensors);
  const SimResult quiet = simulate(plan, profile, kTruth, 2, {.negotiatePrioritySlices = false});
  const SimResult negotiated = simulate(plan, profile, kTruth, 2);
  // Each of the 2 slices is preceded by an AND of a 1-byte mask: 0.51 s.
  EXPECT_NEAR(negotiated.negotiationSeconds, 2 * 0.51, kTolerance);
  EXPECT_GT(negotiated.iterationSeconds, quiet.iterationSeconds);
  EXPECT_NEAR(negotiated.communicationSeconds, quiet.communicationSeconds, kTolerance);
}

TEST(Simulator, OneWorkerCommunicatesNothing) {
  const ComputeProfile profile = twoTensors(100, 200);
  for (const std::string& strategy : strategyNames()) {
    const SimResult result = simulate(planFor(strategy, profile.tensors), profile, kTruth, 1);
    EXPECT_NEAR(result.iterationSeconds, 4.0, kTolerance) << strategy;
    EXPECT_NEAR(result.communicationSeconds, 0.0, kTolerance) << strategy;
    EXPECT_NEAR(result.speedup, 1.0, kTolerance) << strategy;
  }
}

TEST(Simulator, DesignSignatureSplitsTheForwardByBackwardTime) {
  const std::vector<TensorInfo> tensors = {{"a", 100, 1.0}, {"b", 200, 3.0}};
  const SimResult result = simulate(planFor("wfbp", tensors), tensors, 2.0, kTruth, 2);
  // Forward 2, backward [2, 6]: bucket 0 [3, 4.5], bucket 1 [6, 8.5].
  EXPECT_NEAR(result.iterationSeconds, 8.5, kTolerance);
  EXPECT_EQ(splitForwardByBackward(tensors, 2.0), (std::vector<double>{0.5, 1.5}));
}

TEST(Simulator, FifoPlansMatchFifoFinishTimeOnRandomPlans) {
  std::mt19937 random(7);
  std::uniform_int_distribution<size_t> bytes(4, 1 << 22);
  std::uniform_real_distribution<double> seconds(0.0, 2e-3);
  const LinearCommModel truth(50e-6, 1e-9);
  for (int trial = 0; trial < 200; ++trial) {
    const size_t count = 1 + trial % 17;
    ComputeProfile profile;
    for (size_t k = 0; k < count; ++k) {
      profile.tensors.push_back({std::to_string(k), bytes(random), seconds(random)});
      profile.forwardSecondsPerTensor.push_back(seconds(random));
    }
    profile.optimizerSeconds = seconds(random);
    // A random contiguous grouping.
    Plan plan;
    plan.startAfterBackward = trial % 5 == 0;
    for (size_t k = 0; k < count; ++k) {
      if (plan.buckets.empty() || random() % 3 == 0) plan.buckets.emplace_back();
      plan.buckets.back().tensors.push_back(k);
      plan.buckets.back().bytes += profile.tensors[k].bytes;
    }
    const int workers = 2 + trial % 7;
    const SimResult result = simulate(plan, profile, truth, workers);
    const double expected =
        profile.forwardSeconds() +
        std::max(profile.backwardSeconds(), fifoFinishTime(plan, profile.tensors, truth, workers)) +
        profile.optimizerSeconds;
    ASSERT_NEAR(result.iterationSeconds, expected, 1e-12) << "trial " << trial;
    ASSERT_NEAR(result.iterationSeconds, result.computeSeconds + result.waitingSeconds, 1e-12);
  }
}

TEST(Simulator, WritesAChromeTrace) {
  const ComputeProfile profile = twoTensors(100, 200);
  const SimResult result = simulate(planFor("wfbp", profile.tensors), profile, kTruth, 2);
  const std::string path = ::testing::TempDir() + "simulator_trace.json";
  writeSimTrace(path, result);
  std::ifstream file(path);
  const nlohmann::json trace = nlohmann::json::parse(file);
  size_t allreduces = 0;
  for (const nlohmann::json& event : trace["traceEvents"]) {
    if (event.value("cat", "") == "allreduce") ++allreduces;
  }
  EXPECT_EQ(allreduces, 2u * 3u);  // 2 buckets in each of the 3 simulated iterations
  std::filesystem::remove(path);
}

TEST(Simulator, RefusesBadInput) {
  const ComputeProfile profile = twoTensors(100, 200);
  Plan missing;
  missing.buckets = {{{0}, 100, 0, 0}};
  expectContains(errorMessage([&] { simulate(missing, profile, kTruth, 2); }), "tensor 1");
  expectContains(
      errorMessage([&] { simulate(planFor("wfbp", profile.tensors), profile, kTruth, 0); }),
      "workers must be at least 1");
}

}  // namespace
}  // namespace imerge::distributed
