// The contended one-channel schedule against timelines computed by hand, against
// scheduleOnOneChannel when contention costs nothing (every strategy, random models), and the
// simulator with contention: a measured slowdown lengthens exactly the overlapping strategies.
#include "distributed/planning/contended_schedule.h"

#include <gtest/gtest.h>

#include <random>

#include "distributed/planning/planner.h"
#include "distributed/planning/simulator.h"
#include "support/error_text.h"

namespace imerge::distributed {
namespace {

using imerge::testing::errorMessage;
using imerge::testing::expectContains;

constexpr double kTolerance = 1e-9;

// Two tensors of 1 s backward each, one bucket per tensor in FIFO order (wfbp's shape).
std::vector<TensorInfo> twoTensors() {
  return {{"last", 100, 1.0}, {"first", 100, 1.0}};
}
Plan bucketPerTensor() {
  Plan plan;
  plan.buckets = {{{0}, 100, 0, 0}, {{1}, 100, 0, 0}};
  return plan;
}

const LinearCommModel kOneSecond(1.0, 0.0);
const LinearCommModel kFourSeconds(4.0, 0.0);

TEST(ContendedSchedule, ByHandWithBothSlowdowns) {
  // [0, 1] tensor 0 alone. From 1 bucket 0 is on the channel: tensor 1 runs at half speed and
  // ends at 3; bucket 0 has done 2 of its 4 s beside compute, half its work. The other half at
  // the idle cost (1 s for all) takes 0.5 s: it ends at 3.5. Bucket 1 runs alone [3.5, 4.5].
  const ContendedSchedule schedule =
      scheduleBesideCompute(bucketPerTensor(), twoTensors(), kOneSecond,
                            {.besideCompute = &kFourSeconds, .computeSlowdown = 2}, false, 2);
  ASSERT_EQ(schedule.readySeconds.size(), 2u);
  EXPECT_NEAR(schedule.readySeconds[0], 1.0, kTolerance);
  EXPECT_NEAR(schedule.readySeconds[1], 3.0, kTolerance);
  EXPECT_NEAR(schedule.buckets[0].startSeconds, 1.0, kTolerance);
  EXPECT_NEAR(schedule.buckets[0].endSeconds, 3.5, kTolerance);
  EXPECT_NEAR(schedule.buckets[1].readySeconds, 3.0, kTolerance);
  EXPECT_NEAR(schedule.buckets[1].startSeconds, 3.5, kTolerance);
  EXPECT_NEAR(schedule.buckets[1].endSeconds, 4.5, kTolerance);
}

TEST(ContendedSchedule, ComputingAfterBackwardKeepsTheContendedCost) {
  // As above until 3; then the worker still computes (the next forward), so bucket 0's other
  // half takes 2 s (ends at 5) and bucket 1 its 4 s beside compute (ends at 9).
  const ContendedSchedule schedule =
      scheduleBesideCompute(bucketPerTensor(), twoTensors(), kOneSecond,
                            {.besideCompute = &kFourSeconds, .computeSlowdown = 2}, true, 2);
  EXPECT_NEAR(schedule.readySeconds[1], 3.0, kTolerance);
  EXPECT_NEAR(schedule.buckets[0].endSeconds, 5.0, kTolerance);
  EXPECT_NEAR(schedule.buckets[1].endSeconds, 9.0, kTolerance);
}

TEST(ContendedSchedule, StartAfterBackwardRunsAtTheIdleCost) {
  Plan plan = bucketPerTensor();
  plan.startAfterBackward = true;
  const ContendedSchedule schedule =
      scheduleBesideCompute(plan, twoTensors(), kOneSecond,
                            {.besideCompute = &kFourSeconds, .computeSlowdown = 2}, false, 2);
  // Nothing overlaps backward: [0, 2] compute, then two idle all-reduces [2, 3], [3, 4].
  EXPECT_NEAR(schedule.readySeconds[1], 2.0, kTolerance);
  EXPECT_NEAR(schedule.buckets[0].startSeconds, 2.0, kTolerance);
  EXPECT_NEAR(schedule.buckets[1].endSeconds, 4.0, kTolerance);
}

// With contention that costs nothing the event loop is scheduleOnOneChannel, for every
// strategy's plan (FIFO and Priority orders, slices, startAfterBackward) on random models.
TEST(ContendedSchedule, WithoutContentionEqualsTheOneChannelSchedule) {
  std::mt19937 random(11);
  std::uniform_int_distribution<size_t> bytes(4, 4 << 20);
  std::uniform_real_distribution<double> seconds(0.0, 2e-3);
  const LinearCommModel cost(50e-6, 1.0 / 1e9);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<TensorInfo> tensors;
    const int count = 1 + static_cast<int>(random() % 40);
    for (int k = 0; k < count; ++k) {
      // Some tensors of no backward time: several gradients final at the same moment.
      tensors.push_back({std::to_string(k), bytes(random) & ~size_t{3},
                         random() % 5 == 0 ? 0.0 : seconds(random)});
    }
    for (const std::string& strategy : strategyNames()) {
      const Plan plan = makePlanner(strategy, {.sliceElements = 65536})->plan(tensors, cost, 4);
      const std::vector<BucketTiming> expected = scheduleOnOneChannel(plan, tensors, cost, 4);
      const ContendedSchedule actual = scheduleBesideCompute(
          plan, tensors, cost, {.besideCompute = &cost, .computeSlowdown = 1}, false, 4);
      ASSERT_EQ(actual.buckets.size(), expected.size()) << strategy;
      for (size_t b = 0; b < expected.size(); ++b) {
        EXPECT_NEAR(actual.buckets[b].startSeconds, expected[b].startSeconds, kTolerance)
            << strategy << " bucket " << b << " of " << expected.size() << ", trial " << trial;
        EXPECT_NEAR(actual.buckets[b].endSeconds, expected[b].endSeconds, kTolerance)
            << strategy << " bucket " << b << ", trial " << trial;
      }
      const std::vector<double> ready = readyTimes(tensors);
      for (size_t k = 0; k < ready.size(); ++k) {
        EXPECT_NEAR(actual.readySeconds[k], ready[k], kTolerance) << strategy << " tensor " << k;
      }
    }
  }
}

TEST(ContendedSchedule, RefusesASpeedUp) {
  expectContains(errorMessage([] {
                   scheduleBesideCompute(bucketPerTensor(), twoTensors(), kOneSecond,
                                         {.besideCompute = &kFourSeconds, .computeSlowdown = 0.5},
                                         false, 2);
                 }),
                 "compute slowdown 0.5 is below 1");
  expectContains(errorMessage([] {
                   scheduleBesideCompute(bucketPerTensor(), twoTensors(), kOneSecond, {}, false, 2);
                 }),
                 "no cost beside compute");
}

// The simulator with contention: the overlapping strategy pays it, default (all-reduces after
// backward, the worker waiting) does not.
TEST(ContendedSchedule, SimulatorChargesOnlyWhatOverlaps) {
  ComputeProfile profile;
  profile.tensors = twoTensors();
  profile.forwardSecondsPerTensor = {1.0, 1.0};
  const SimOptions contended{.contention = {.besideCompute = &kFourSeconds, .computeSlowdown = 2}};
  for (const char* strategy : {"wfbp", "default"}) {
    const Plan plan = makePlanner(strategy, {})->plan(profile.tensors, kOneSecond, 2);
    const SimResult plain = simulate(plan, profile, kOneSecond, 2);
    const SimResult withContention = simulate(plan, profile, kOneSecond, 2, contended);
    if (std::string(strategy) == "default") {
      EXPECT_NEAR(withContention.iterationSeconds, plain.iterationSeconds, kTolerance);
      EXPECT_NEAR(withContention.communicationSeconds, plain.communicationSeconds, kTolerance);
    } else {
      // Forward 2 s, then the schedule by hand above: its last all-reduce ends 4.5 s into
      // backward. Without contention: bucket 0 [1, 2], bucket 1 [2, 3].
      EXPECT_NEAR(plain.iterationSeconds, 2.0 + 3.0, kTolerance);
      EXPECT_NEAR(withContention.iterationSeconds, 2.0 + 4.5, kTolerance);
      EXPECT_NEAR(withContention.communicationSeconds, 2.5 + 1.0, kTolerance);
      EXPECT_NEAR(withContention.waitingSeconds, 1.5, kTolerance);
    }
  }
}

}  // namespace
}  // namespace imerge::distributed
