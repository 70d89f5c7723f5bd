// Planners, plan validation and the one-channel schedule: each strategy of docs/design.md section 4
// against hand-computed plans, the imerge DP against exhaustive search over every contiguous
// grouping, and validatePlan against each kind of malformed plan.
#include "distributed/planning/planner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "distributed/planning/channel_schedule.h"
#include "distributed/planning/comm_model.h"
#include "distributed/planning/plan.h"
#include "support/error_text.h"

namespace imerge::distributed {
namespace {

using imerge::testing::errorMessage;
using imerge::testing::expectContains;

// "t3". (Built by append: g++ 12 warns falsely, -Wrestrict, about "literal" + std::string.)
std::string tensorName(size_t index) {
  return std::string("t").append(std::to_string(index));
}

// Tensors named t0, t1, ... with the given sizes and per-tensor backward times.
std::vector<TensorInfo> makeTensors(const std::vector<size_t>& bytes,
                                    const std::vector<double>& backwardSeconds) {
  EXPECT_EQ(bytes.size(), backwardSeconds.size());
  std::vector<TensorInfo> tensors;
  for (size_t k = 0; k < bytes.size(); ++k) {
    tensors.push_back({tensorName(k), bytes[k], backwardSeconds[k]});
  }
  return tensors;
}

std::vector<TensorInfo> tensorsOfBytes(const std::vector<size_t>& bytes) {
  return makeTensors(bytes, std::vector<double>(bytes.size(), 1e-3));
}

// The tensor indices of each bucket, for comparing groupings in one EXPECT_EQ.
std::vector<std::vector<size_t>> groupsOf(const Plan& plan) {
  std::vector<std::vector<size_t>> groups;
  for (const Bucket& bucket : plan.buckets) groups.push_back(bucket.tensors);
  return groups;
}

Plan planWith(const std::string& strategy, const std::vector<TensorInfo>& tensors,
              const CommModel& model, int workers = 2, PlannerOptions options = {}) {
  const Plan plan = makePlanner(strategy, options)->plan(tensors, model, workers);
  validatePlan(plan, tensors);
  return plan;
}

// The FIFO plan of whole tensors whose groups start where `mask` has bit k-1 set (k >= 1).
Plan groupingFromMask(const std::vector<TensorInfo>& tensors, unsigned mask) {
  Plan plan;
  for (size_t k = 0; k < tensors.size(); ++k) {
    if (k == 0 || (mask >> (k - 1) & 1u)) {
      plan.buckets.emplace_back();
      plan.buckets.back().priority = static_cast<int>(plan.buckets.size() - 1);
    }
    plan.buckets.back().tensors.push_back(k);
    plan.buckets.back().bytes += tensors[k].bytes;
  }
  return plan;
}

// ---- registry ----

TEST(PlannerRegistry, NamesEveryStrategyAndRefusesOthers) {
  const std::vector<std::string> expected = {"default", "wfbp",   "fusion", "priority",
                                             "mgwfbp",  "imerge", "ddp",    "imerge-overlap"};
  EXPECT_EQ(strategyNames(), expected);
  for (const std::string& name : strategyNames()) {
    const auto planner = makePlanner(name, {});
    EXPECT_EQ(planner->name(), name);
    EXPECT_EQ(planner->usesTimings(),
              name == "mgwfbp" || name == "imerge" || name == "imerge-overlap")
        << name;
  }
  const std::string message = errorMessage([] { makePlanner("horovod", {}); });
  expectContains(message, "'horovod'");
  expectContains(message, "default, wfbp, fusion, priority, mgwfbp, imerge, ddp, imerge-overlap");
}

TEST(PlannerRegistry, RefusesZeroThresholdsAndWorkers) {
  PlannerOptions zeroFusion;
  zeroFusion.fusionBytes = 0;
  expectContains(errorMessage([&] { makePlanner("fusion", zeroFusion); }), "--fusion-bytes");
  PlannerOptions zeroSlices;
  zeroSlices.sliceElements = 0;
  expectContains(errorMessage([&] { makePlanner("priority", zeroSlices); }), "--slice-elems");
  PlannerOptions zeroDdpCap;
  zeroDdpCap.ddpBucketBytes = 0;
  expectContains(errorMessage([&] { makePlanner("ddp", zeroDdpCap); }), "bucket caps");
  const LinearCommModel model(1e-5, 1e-9);
  const auto tensors = tensorsOfBytes({4, 8});
  for (const std::string& name : strategyNames()) {
    expectContains(errorMessage([&] { makePlanner(name, {})->plan(tensors, model, 0); }),
                   "workers must be at least 1");
  }
}

TEST(Planners, EveryStrategyPlansNoTensorsAsNoBuckets) {
  const LinearCommModel model(1e-5, 1e-9);
  for (const std::string& name : strategyNames()) {
    EXPECT_TRUE(planWith(name, {}, model).buckets.empty()) << name;
  }
}

// ---- readyTimes, schedule ----

TEST(ReadyTimes, AreRunningSumsAndRefuseNegativeTimes) {
  const auto ready = readyTimes(makeTensors({4, 4, 4}, {0.5, 0.25, 1.0}));
  EXPECT_EQ(ready, (std::vector<double>{0.5, 0.75, 1.75}));
  const std::string message = errorMessage([] { readyTimes(makeTensors({4, 4}, {0.5, -0.1})); });
  expectContains(message, "tensor 1 ('t1')");
  expectContains(message, "-0.1");
}

// Hand case shared by the wfbp and default tests: ready at 1, 2, 3 s; T(M) = 0.5 + 0.01 M, so
// the three all-reduces take 1.5, 2.5 and 3.5 s.
struct ThreeTensorCase {
  std::vector<TensorInfo> tensors = makeTensors({100, 200, 300}, {1, 1, 1});
  LinearCommModel model{0.5, 0.01};
};

TEST(WfbpPlanner, OneBucketPerTensorLaunchedWhenReady) {
  const ThreeTensorCase hand;
  const Plan plan = planWith("wfbp", hand.tensors, hand.model);
  EXPECT_EQ(groupsOf(plan), (std::vector<std::vector<size_t>>{{0}, {1}, {2}}));
  EXPECT_EQ(plan.order, LaunchOrder::Fifo);
  EXPECT_FALSE(plan.startAfterBackward);
  for (size_t b = 0; b < plan.buckets.size(); ++b) {
    EXPECT_EQ(plan.buckets[b].bytes, hand.tensors[b].bytes);
    EXPECT_EQ(plan.buckets[b].priority, static_cast<int>(b));
  }
  // t0: 1 -> 2.5; t1 ready at 2, waits for the channel: 2.5 -> 5; t2 ready at 3: 5 -> 8.5.
  const auto timings = scheduleOnOneChannel(plan, hand.tensors, hand.model, 2);
  ASSERT_EQ(timings.size(), 3u);
  EXPECT_DOUBLE_EQ(timings[0].startSeconds, 1.0);
  EXPECT_DOUBLE_EQ(timings[1].startSeconds, 2.5);
  EXPECT_DOUBLE_EQ(timings[2].startSeconds, 5.0);
  EXPECT_DOUBLE_EQ(fifoFinishTime(plan, hand.tensors, hand.model, 2), 8.5);
}

TEST(DefaultPlanner, SendsNothingBeforeBackwardEnds) {
  const ThreeTensorCase hand;
  const Plan plan = planWith("default", hand.tensors, hand.model);
  EXPECT_EQ(groupsOf(plan), (std::vector<std::vector<size_t>>{{0}, {1}, {2}}));
  EXPECT_TRUE(plan.startAfterBackward);
  const double backwardEnd = 3.0;
  for (const BucketTiming& timing : scheduleOnOneChannel(plan, hand.tensors, hand.model, 2)) {
    EXPECT_GE(timing.startSeconds, backwardEnd);
  }
  // Backward ends at 3, then 1.5 + 2.5 + 3.5 s of all-reduce back to back.
  const double finish = fifoFinishTime(plan, hand.tensors, hand.model, 2);
  EXPECT_DOUBLE_EQ(finish, backwardEnd + 7.5);
  EXPECT_GT(finish, fifoFinishTime(planWith("wfbp", hand.tensors, hand.model), hand.tensors,
                                   hand.model, 2));
}

// ---- fusion ----

TEST(FusionPlanner, ClosesBucketsWhereTheThresholdSays) {
  PlannerOptions options;
  options.fusionBytes = 100;
  // 40+50 = 90, and 20 more would be 110: close. 20+100 = 120: close. 100 alone, +150: close.
  // 150 is larger than the threshold: its own bucket. 10+90 = 100 exactly, a 0-byte tensor
  // still fits (100), 30 more would be 130: close. 30 alone at the end.
  const auto tensors = tensorsOfBytes({40, 50, 20, 100, 150, 10, 90, 0, 30});
  const Plan plan = planWith("fusion", tensors, LinearCommModel(1e-5, 1e-9), 2, options);
  EXPECT_EQ(groupsOf(plan),
            (std::vector<std::vector<size_t>>{{0, 1}, {2}, {3}, {4}, {5, 6, 7}, {8}}));
  EXPECT_EQ(plan.buckets[0].bytes, 90u);
  EXPECT_EQ(plan.buckets[4].bytes, 100u);
  EXPECT_EQ(plan.order, LaunchOrder::Fifo);
  EXPECT_FALSE(plan.startAfterBackward);
}

TEST(FusionPlanner, NeverExceedsTheThresholdOnRandomSizes) {
  std::mt19937_64 random(20240611);
  const LinearCommModel model(1e-5, 1e-9);
  for (int trial = 0; trial < 200; ++trial) {
    const size_t threshold = std::uniform_int_distribution<size_t>(1, 1 << 16)(random);
    const size_t count = std::uniform_int_distribution<size_t>(1, 80)(random);
    std::vector<size_t> bytes(count);
    for (size_t& b : bytes) b = std::uniform_int_distribution<size_t>(0, 2 * threshold)(random);
    const auto tensors = tensorsOfBytes(bytes);
    PlannerOptions options;
    options.fusionBytes = threshold;
    const Plan plan = planWith("fusion", tensors, model, 2, options);
    for (size_t b = 0; b < plan.buckets.size(); ++b) {
      const Bucket& bucket = plan.buckets[b];
      if (bucket.bytes > threshold) {
        // Only a single oversized tensor (plus nothing) may exceed the threshold.
        ASSERT_GT(tensors[bucket.tensors.front()].bytes, threshold) << "trial " << trial;
        for (size_t i = 1; i < bucket.tensors.size(); ++i) {
          ASSERT_EQ(tensors[bucket.tensors[i]].bytes, 0u) << "trial " << trial;
        }
      }
      // Greedy: a bucket is closed only because the next tensor would not fit.
      if (b + 1 < plan.buckets.size()) {
        const size_t next = plan.buckets[b + 1].tensors.front();
        ASSERT_GT(bucket.bytes + tensors[next].bytes, threshold) << "trial " << trial;
      }
    }
  }
}

// ---- ddp ----

TEST(DdpPlanner, ClosesABucketOnceItReachesItsCapWithASmallerFirstBucket) {
  PlannerOptions options;
  options.ddpFirstBucketBytes = 50;
  options.ddpBucketBytes = 100;
  // First bucket, cap 50: 30, then 30 more = 60 >= 50: close (PyTorch overshoots by the last
  // tensor rather than starting a new bucket before it). Then cap 100: 40+60 = 100 reaches it
  // exactly: close. 150 alone is over: close. 10+20 stays open to the end.
  const auto tensors = tensorsOfBytes({30, 30, 40, 60, 150, 10, 20});
  const Plan plan = planWith("ddp", tensors, LinearCommModel(1e-5, 1e-9), 2, options);
  EXPECT_EQ(groupsOf(plan), (std::vector<std::vector<size_t>>{{0, 1}, {2, 3}, {4}, {5, 6}}));
  EXPECT_EQ(plan.buckets[0].bytes, 60u);
  EXPECT_EQ(plan.buckets[1].bytes, 100u);
  EXPECT_EQ(plan.order, LaunchOrder::Fifo);
  EXPECT_FALSE(plan.startAfterBackward);
}

TEST(DdpPlanner, DefaultsArePyTorchsOneMebibyteFirstBucketAndTwentyFiveAfter) {
  // ResNet-like sizes: 600 KiB tensors. The first bucket closes at 2 of them (1.2 MiB >= 1 MiB),
  // the others at 43 (25.2 MiB >= 25 MiB, 42 would be 24.6 MiB).
  const std::vector<size_t> bytes(100, size_t{600} << 10);
  const Plan plan = planWith("ddp", tensorsOfBytes(bytes), LinearCommModel(1e-5, 1e-9));
  ASSERT_EQ(plan.buckets.size(), 4u);
  EXPECT_EQ(plan.buckets[0].tensors.size(), 2u);
  EXPECT_EQ(plan.buckets[1].tensors.size(), 43u);
  EXPECT_EQ(plan.buckets[2].tensors.size(), 43u);
  EXPECT_EQ(plan.buckets[3].tensors.size(), 12u);
}

// ---- priority ----

TEST(PriorityPlanner, SlicesTileEachTensorWithForwardPositionPriorities) {
  PlannerOptions options;
  options.sliceElements = 4;  // 16-byte slices
  // t0: 40 bytes -> [0,16) [16,32) [32,40); t1: exactly one slice; t2: empty; t3: 8 bytes.
  const auto tensors = tensorsOfBytes({40, 16, 0, 8});
  const Plan plan = planWith("priority", tensors, LinearCommModel(1e-5, 1e-9), 2, options);
  EXPECT_EQ(plan.order, LaunchOrder::Priority);
  EXPECT_TRUE(plan.overlapWithNextForward);
  EXPECT_FALSE(plan.startAfterBackward);
  struct Expected {
    size_t tensor, offset, bytes;
    int priority;
  };
  const std::vector<Expected> expected = {{0, 0, 16, 3}, {0, 16, 16, 3}, {0, 32, 8, 3},
                                          {1, 0, 16, 2}, {2, 0, 0, 1},   {3, 0, 8, 0}};
  ASSERT_EQ(plan.buckets.size(), expected.size());
  for (size_t b = 0; b < expected.size(); ++b) {
    EXPECT_EQ(plan.buckets[b].tensors, std::vector<size_t>{expected[b].tensor}) << b;
    EXPECT_EQ(plan.buckets[b].sliceOffsetBytes, expected[b].offset) << b;
    EXPECT_EQ(plan.buckets[b].bytes, expected[b].bytes) << b;
    EXPECT_EQ(plan.buckets[b].priority, expected[b].priority) << b;
  }
}

TEST(PriorityPlanner, TilesRandomTensorsBySlices) {
  std::mt19937_64 random(7);
  for (int trial = 0; trial < 100; ++trial) {
    PlannerOptions options;
    options.sliceElements = std::uniform_int_distribution<size_t>(1, 64)(random);
    const size_t sliceBytes = options.sliceElements * 4;
    std::vector<size_t> bytes(std::uniform_int_distribution<size_t>(1, 30)(random));
    for (size_t& b : bytes) b = 4 * std::uniform_int_distribution<size_t>(0, 300)(random);
    const auto tensors = tensorsOfBytes(bytes);
    const Plan plan = planWith("priority", tensors, LinearCommModel(1e-5, 1e-9), 2, options);
    std::vector<size_t> sliceCount(tensors.size(), 0);
    for (const Bucket& slice : plan.buckets) {
      ASSERT_EQ(slice.tensors.size(), 1u);
      ASSERT_LE(slice.bytes, sliceBytes);
      ASSERT_EQ(slice.priority, static_cast<int>(tensors.size() - 1 - slice.tensors[0]));
      ++sliceCount[slice.tensors[0]];
    }
    for (size_t k = 0; k < tensors.size(); ++k) {
      const size_t wanted = std::max<size_t>(1, (tensors[k].bytes + sliceBytes - 1) / sliceBytes);
      ASSERT_EQ(sliceCount[k], wanted) << "trial " << trial << " tensor " << k;
    }
  }
}

TEST(PriorityPlanner, ScheduleSendsTheLowestForwardLayerFirst) {
  PlannerOptions options;
  options.sliceElements = 25;  // 100-byte slices
  // All gradients are ready at once (zero backward times): the channel must serve t2's slices
  // (forward layer 0) first, then t1's, then t0's, whatever their order in the plan.
  const auto tensors = makeTensors({200, 100, 200}, {0, 0, 0});
  const LinearCommModel model(1, 0);  // every slice takes 1 s
  const Plan plan = planWith("priority", tensors, model, 2, options);
  const auto timings = scheduleOnOneChannel(plan, tensors, model, 2);
  ASSERT_EQ(timings.size(), 5u);  // t0: 2 slices, t1: 1, t2: 2
  std::vector<double> startOfTensor(3, 0);
  for (size_t b = 0; b < plan.buckets.size(); ++b) {
    startOfTensor[plan.buckets[b].tensors[0]] =
        std::max(startOfTensor[plan.buckets[b].tensors[0]], timings[b].startSeconds);
  }
  EXPECT_DOUBLE_EQ(startOfTensor[2], 1.0);  // t2 takes [0, 2)
  EXPECT_DOUBLE_EQ(startOfTensor[1], 2.0);  // then t1
  EXPECT_DOUBLE_EQ(startOfTensor[0], 4.0);  // t0 last: [3, 5)
  EXPECT_DOUBLE_EQ(fifoFinishTime(plan, tensors, model, 2), 5.0);
}

TEST(PriorityPlanner, ScheduleDoesNotWaitForAHigherPriorityThatIsNotReady) {
  // t0 is ready at 1 s, t1 (higher priority) only at 10 s: the channel sends t0 first rather
  // than idling, and a started all-reduce is never preempted.
  const auto tensors = makeTensors({4, 4}, {1, 9});
  const LinearCommModel model(2, 0);
  const Plan plan = planWith("priority", tensors, model);
  const auto timings = scheduleOnOneChannel(plan, tensors, model, 2);
  EXPECT_DOUBLE_EQ(timings[0].startSeconds, 1.0);
  EXPECT_DOUBLE_EQ(timings[1].startSeconds, 10.0);
}

// ---- mgwfbp ----

// T(M) = 1 + 0.01 M: a = 1 s of startup. In each case r is the running sum of backward times.
TEST(MgwfbpPlanner, MergesWhileWaitingCostsLessThanAStartup) {
  const LinearCommModel model(1, 0.01);
  // r = 1, 1.5, 2. k=0: group {0} runs 1 -> 3; r1 = 1.5 < 3 and r1 - s0 = 0.5 < a: merge; the
  // group {0,1} (200 B) now starts at 1.5 and ends 4.5. k=1: r2 = 2 < 4.5 and 2 - 1.5 < 1:
  // merge; {0,1,2} starts at 2 and ends at 6. One bucket.
  const auto tensors = makeTensors({100, 100, 100}, {1, 0.5, 0.5});
  const Plan plan = planWith("mgwfbp", tensors, model);
  EXPECT_EQ(groupsOf(plan), (std::vector<std::vector<size_t>>{{0, 1, 2}}));
  EXPECT_DOUBLE_EQ(fifoFinishTime(plan, tensors, model, 2), 6.0);
}

// (With a >= 0, "k has not started" implies "r_{k+1} - s_k < 0 <= a", so this case exercises
// both conditions; the first cannot be told apart from the second by any plan.)
TEST(MgwfbpPlanner, MergesIntoAGroupThatHasNotStartedYet) {
  const LinearCommModel model(1, 0.01);
  // r = 1, 3, 4. k=0: {0} (1000 B) runs 1 -> 12; r1 = 3 < 12 but 0 has started (1 < 3) and
  // 3 - 1 = 2 is not < a = 1: no merge. {1} starts when the channel frees, s1 = 12, e1 = 13.1.
  // k=1: r2 = 4 < 13.1 and s1 = 12 > 4 (1 has not started when 2 is ready): merge; {1,2}
  // (20 B) runs 12 -> 13.2.
  const auto tensors = makeTensors({1000, 10, 10}, {1, 2, 1});
  const Plan plan = planWith("mgwfbp", tensors, model);
  EXPECT_EQ(groupsOf(plan), (std::vector<std::vector<size_t>>{{0}, {1, 2}}));
  EXPECT_DOUBLE_EQ(fifoFinishTime(plan, tensors, model, 2), 13.2);
}

TEST(MgwfbpPlanner, KeepsApartWhenTheNextIsLateOrTheWaitIsLong) {
  const LinearCommModel model(1, 0.01);
  // r = 1, 6, 7.5, 8.5 (100 B each, 2 s per all-reduce). k=0: {0} ends at 3 < r1 = 6: apart.
  // k=1: {1} runs 6 -> 8; r2 = 7.5 < 8 but 1 started at 6 < 7.5 and 7.5 - 6 = 1.5 >= a: apart.
  // k=2: {2} runs 8 -> 10; r3 = 8.5 < 10, 2 started at 8 < 8.5 and 8.5 - 8 = 0.5 < a: merge.
  const auto tensors = makeTensors({100, 100, 100, 100}, {1, 5, 1.5, 1});
  const Plan plan = planWith("mgwfbp", tensors, model);
  EXPECT_EQ(groupsOf(plan), (std::vector<std::vector<size_t>>{{0}, {1}, {2, 3}}));
}

TEST(MgwfbpPlanner, TheStartupComparisonIsStrict) {
  const LinearCommModel model(1, 0.01);
  // r = 1, 2: {0} runs 1 -> 3, r1 = 2 < 3, 0 has started, and r1 - s0 = 1 is not < a = 1.
  const auto tensors = makeTensors({100, 100}, {1, 1});
  EXPECT_EQ(groupsOf(planWith("mgwfbp", tensors, model)),
            (std::vector<std::vector<size_t>>{{0}, {1}}));
}

TEST(MgwfbpPlanner, TakesTheStartupOfANonLinearModelAsTheCostOfOneByte) {
  // Both models charge 2.5 s for each 1000-byte tensor, but the piecewise one's smallest
  // message costs 0.5 s while the line's startup is 1.5 s. r = 1, 1.8: {0} runs 1 -> 3.5,
  // r1 < 3.5, 0 has started, and the wait r1 - s0 = 0.8 is below 1.5 but not below 0.5.
  const auto tensors = makeTensors({1000, 1000}, {1, 0.8});
  const LinearCommModel linear(1.5, 0.001);
  const PiecewiseCommModel piecewise(0.5, {{1000, 1.5, 0.001}});
  ASSERT_DOUBLE_EQ(linear.seconds(1000, 2), piecewise.seconds(1000, 2));
  EXPECT_EQ(groupsOf(planWith("mgwfbp", tensors, linear)),
            (std::vector<std::vector<size_t>>{{0, 1}}));
  EXPECT_EQ(groupsOf(planWith("mgwfbp", tensors, piecewise)),
            (std::vector<std::vector<size_t>>{{0}, {1}}));
}

// ---- imerge ----

TEST(ImergePlanner, SplitsWhenTheChannelWouldOtherwiseIdle) {
  // r = 1, 10; T(100 B) = 1.5 s, T(200 B) = 2.5 s. Apart: 1 -> 2.5 and 10 -> 11.5; together
  // the group waits for r1: 10 -> 12.5. Apart wins.
  const auto tensors = makeTensors({100, 100}, {1, 9});
  const LinearCommModel model(0.5, 0.01);
  const Plan plan = planWith("imerge", tensors, model);
  EXPECT_EQ(groupsOf(plan), (std::vector<std::vector<size_t>>{{0}, {1}}));
  EXPECT_DOUBLE_EQ(fifoFinishTime(plan, tensors, model, 2), 11.5);
}

TEST(ImergePlanner, TiesGoToFewerBuckets) {
  // No startup and everything ready at once: every grouping ends at 0.01 * 600 = 6 s.
  const auto tensors = makeTensors({100, 200, 300}, {0, 0, 0});
  EXPECT_EQ(groupsOf(planWith("imerge", tensors, LinearCommModel(0, 0.01))),
            (std::vector<std::vector<size_t>>{{0, 1, 2}}));
  // r = 1, 10 with a flat 1 s cost: apart ends 1 -> 2 and 10 -> 11, together 10 -> 11.
  const auto late = makeTensors({100, 100}, {1, 9});
  EXPECT_EQ(groupsOf(planWith("imerge", late, PiecewiseCommModel(1, {}))),
            (std::vector<std::vector<size_t>>{{0, 1}}));
  // A tie between different bucket counts: T = 3 s below 5 B, 5 s from 5 B; r = 6, 9, 9, 15;
  // sizes 1, 4, 2, 1 B. f(1) = 9 ([0]); f(2) = 12 ([0],[1]: 9 -> 12 beats [0,1]: 9 -> 14);
  // f(3) = 14 ([0-2] from 9, one bucket). For j = 4 the last group [2,3] (3 B) after f(2)
  // ends at max(12, 15) + 3 = 18 with 3 buckets, and [3] after f(3) at max(14, 15) + 3 = 18
  // with 2: the rule takes the 2 buckets [0-2], [3], though [2,3] is found first.
  const auto step = makeTensors({1, 4, 2, 1}, {6, 3, 0, 6});
  const PiecewiseCommModel stepModel(3, {{5, 5, 0}});
  const Plan plan = planWith("imerge", step, stepModel);
  EXPECT_EQ(groupsOf(plan), (std::vector<std::vector<size_t>>{{0, 1, 2}, {3}}));
  EXPECT_DOUBLE_EQ(fifoFinishTime(plan, step, stepModel, 2), 18.0);
}

TEST(ImergePlanner, MergesSmallTensorsBelowTheKnee) {
  // The piecewise model's point: ten 1 KiB tensors ready 0.1 ms apart cost 30 us each alone
  // (flat below 8 KiB), so the DP merges them; what is left after the last is ready is short.
  const PiecewiseCommModel model(30e-6, {{8192, 20e-6, 1e-9}});
  const auto tensors = makeTensors(std::vector<size_t>(10, 1024), std::vector<double>(10, 5e-6));
  const Plan plan = planWith("imerge", tensors, model);
  EXPECT_LT(plan.buckets.size(), 4u);
  EXPECT_LT(fifoFinishTime(plan, tensors, model, 2),
            fifoFinishTime(planWith("wfbp", tensors, model), tensors, model, 2));
}

// A random instance: L tensors of 4 B .. 4 MiB (log-uniform, so most are small, as in real
// models), backward times up to 2 ms, and a linear or a knee-shaped piecewise model.
struct RandomInstance {
  std::vector<TensorInfo> tensors;
  std::unique_ptr<CommModel> model;
};

RandomInstance randomInstance(std::mt19937_64& random, size_t maxTensors) {
  RandomInstance instance;
  const size_t count = std::uniform_int_distribution<size_t>(1, maxTensors)(random);
  std::uniform_real_distribution<double> logBytes(std::log(4.0), std::log(4.0 * (1 << 20)));
  std::uniform_real_distribution<double> backward(0, 2e-3);
  for (size_t k = 0; k < count; ++k) {
    instance.tensors.push_back(
        {tensorName(k), static_cast<size_t>(std::exp(logBytes(random))), backward(random)});
  }
  std::uniform_real_distribution<double> startup(1e-6, 1e-3);
  std::uniform_real_distribution<double> bandwidth(1e8, 1e10);
  if (std::uniform_int_distribution<int>(0, 1)(random) == 0) {
    instance.model = std::make_unique<LinearCommModel>(startup(random), 1 / bandwidth(random));
  } else {
    const double flat = startup(random);
    instance.model = std::make_unique<PiecewiseCommModel>(
        flat,
        std::vector<PiecewiseCommModel::Segment>{{8192, 2 * flat, 1 / bandwidth(random)},
                                                 {512 * 1024, 3 * flat, 1 / bandwidth(random)}});
  }
  return instance;
}

TEST(ImergePlanner, EqualsExhaustiveSearchOverEveryContiguousGrouping) {
  std::mt19937_64 random(424242);
  for (int trial = 0; trial < 300; ++trial) {
    const RandomInstance instance = randomInstance(random, 12);
    const auto& tensors = instance.tensors;
    const CommModel& model = *instance.model;
    double best = std::numeric_limits<double>::infinity();
    for (unsigned mask = 0; mask < (1u << (tensors.size() - 1)); ++mask) {
      best = std::min(best, fifoFinishTime(groupingFromMask(tensors, mask), tensors, model, 4));
    }
    const Plan plan = planWith("imerge", tensors, model, 4);
    const double imerge = fifoFinishTime(plan, tensors, model, 4);
    ASSERT_NEAR(imerge, best, 1e-9 * best)
        << "trial " << trial << ", " << tensors.size() << " tensors, " << model.describe();
  }
}

TEST(ImergePlanner, IsNeverWorseThanTheOtherWholeTensorStrategies) {
  std::mt19937_64 random(99);
  for (int trial = 0; trial < 300; ++trial) {
    const RandomInstance instance = randomInstance(random, 60);
    const auto& tensors = instance.tensors;
    const CommModel& model = *instance.model;
    const double imerge = fifoFinishTime(planWith("imerge", tensors, model), tensors, model, 2);
    std::vector<std::pair<std::string, PlannerOptions>> others = {
        {"default", {}}, {"wfbp", {}}, {"mgwfbp", {}}, {"ddp", {}}};
    for (size_t fusionBytes : {size_t{4096}, size_t{1} << 20, size_t{64} << 20}) {
      PlannerOptions options;
      options.fusionBytes = fusionBytes;
      others.emplace_back("fusion", options);
    }
    for (const auto& [name, options] : others) {
      const double other =
          fifoFinishTime(planWith(name, tensors, model, 2, options), tensors, model, 2);
      ASSERT_LE(imerge, other * (1 + 1e-12))
          << "trial " << trial << ": " << name << ", " << model.describe();
    }
  }
}

TEST(ImergePlanner, PlansTwoHundredTensorsWellUnderAMillisecond) {
  std::mt19937_64 random(5);
  std::vector<TensorInfo> tensors;
  for (size_t k = 0; k < 200; ++k) {
    tensors.push_back(
        {tensorName(k), std::uniform_int_distribution<size_t>(4, 1 << 22)(random), 1e-4});
  }
  const PiecewiseCommModel model(30e-6, {{8192, 40e-6, 1e-9}, {1 << 19, 60e-6, 2e-9}});
  for (const std::string name : {"imerge", "mgwfbp"}) {
    const auto planner = makePlanner(name, {});
    double fastest = std::numeric_limits<double>::infinity();
    for (int repeat = 0; repeat < 20; ++repeat) {
      const auto begin = std::chrono::steady_clock::now();
      const Plan plan = planner->plan(tensors, model, 8);
      const auto end = std::chrono::steady_clock::now();
      ASSERT_FALSE(plan.buckets.empty());
      fastest = std::min(fastest, std::chrono::duration<double>(end - begin).count());
    }
    // Measured 0.07 ms for imerge and 1 us for mgwfbp (fastest of 20); the bound leaves room
    // for a busy machine, not for an O(L^3) programme (tens of ms).
    EXPECT_LT(fastest, 1e-3) << name;
  }
}

// ---- validatePlan ----

class ValidatePlan : public ::testing::Test {
 protected:
  // t0: 8 B, t1: 16 B, t2: 4 B, t3: 12 B.
  std::vector<TensorInfo> tensors = makeTensors({8, 16, 4, 12}, {1, 1, 1, 1});

  Bucket whole(std::vector<size_t> indices) const {
    Bucket bucket;
    for (size_t k : indices) bucket.bytes += tensors[k].bytes;
    bucket.tensors = std::move(indices);
    return bucket;
  }
  static Bucket slice(size_t tensor, size_t offset, size_t bytes) {
    Bucket bucket;
    bucket.tensors = {tensor};
    bucket.sliceOffsetBytes = offset;
    bucket.bytes = bytes;
    return bucket;
  }
  std::string refusal(std::vector<Bucket> buckets) const {
    Plan plan;
    plan.buckets = std::move(buckets);
    return errorMessage([&] { validatePlan(plan, tensors); });
  }
};

TEST_F(ValidatePlan, AcceptsWholeBucketsAndTilingSlices) {
  Plan plan;
  plan.buckets = {whole({0, 1}), slice(2, 0, 4), slice(3, 8, 4), slice(3, 0, 8)};
  EXPECT_NO_THROW(validatePlan(plan, tensors));
}

TEST_F(ValidatePlan, RefusesAMissingTensor) {
  const std::string message = refusal({whole({0, 1}), whole({3})});
  expectContains(message, "tensor 2 ('t2') is in no bucket");
}

TEST_F(ValidatePlan, RefusesADuplicatedTensor) {
  expectContains(refusal({whole({0, 1}), whole({1, 2}), whole({3})}),
                 "tensor 1 ('t1') is in buckets 0 and 1");
  expectContains(refusal({whole({0, 1, 2}), whole({3}), slice(3, 0, 8)}),
                 "tensor 3 ('t3') is whole in bucket 1 and also sliced in bucket 2");
}

TEST_F(ValidatePlan, RefusesNonContiguousBuckets) {
  const std::string message = refusal({whole({0, 2}), whole({1}), whole({3})});
  expectContains(message, "bucket 0 is not contiguous");
  expectContains(message, "tensor 2 ('t2') follows tensor 0 ('t0')");
}

TEST_F(ValidatePlan, RefusesWrongBytes) {
  Bucket wrong = whole({0, 1});
  wrong.bytes = 20;
  expectContains(refusal({wrong, whole({2, 3})}),
                 "bucket 0 [0-1] says 20 bytes, but its tensors hold 24 bytes");
  // A single-tensor bucket with more bytes than its tensor reaches past it.
  expectContains(refusal({whole({0, 1}), whole({2}), slice(3, 0, 13)}),
                 "bucket 2 says 13 bytes at offset 0 of tensor 3 ('t3'), which reaches past");
}

TEST_F(ValidatePlan, RefusesSlicesThatDoNotTile) {
  expectContains(refusal({whole({0, 1, 2}), slice(3, 0, 4), slice(3, 6, 6)}),
                 "slices of tensor 3 ('t3') do not tile it: bytes [4, 6) are in no slice");
  expectContains(refusal({whole({0, 1, 2}), slice(3, 0, 8), slice(3, 4, 8)}),
                 "slices of tensor 3 ('t3') overlap");
  expectContains(refusal({whole({0, 1, 2}), slice(3, 0, 4), slice(3, 4, 4)}),
                 "they end at byte 8 of 12");
}

TEST_F(ValidatePlan, RefusesEmptyBucketsUnknownTensorsAndMultiTensorSlices) {
  expectContains(refusal({Bucket{}}), "bucket 0 holds no tensor");
  expectContains(refusal({whole({0, 1, 2, 3}), slice(7, 0, 4)}),
                 "bucket 1 [7] names tensor 7, but there are only 4 tensors");
  Bucket offsetGroup = whole({0, 1});
  offsetGroup.sliceOffsetBytes = 4;
  expectContains(refusal({offsetGroup, whole({2, 3})}),
                 "only a single-tensor bucket can be a slice");
}

TEST_F(ValidatePlan, AcceptsEveryPlannersOutputOnRandomInstances) {
  std::mt19937_64 random(3);
  PlannerOptions options;
  options.fusionBytes = 1 << 16;
  options.sliceElements = 1 << 12;
  for (int trial = 0; trial < 50; ++trial) {
    const RandomInstance instance = randomInstance(random, 40);
    for (const std::string& name : strategyNames()) {
      const Plan plan = makePlanner(name, options)->plan(instance.tensors, *instance.model, 2);
      EXPECT_NO_THROW(validatePlan(plan, instance.tensors)) << name << " trial " << trial;
    }
  }
}

// ---- describePlan ----

TEST(DescribePlan, ListsRangesAndSizes) {
  // 1 MiB + 0.2 MiB = 1.2 MiB in the first bucket, 64 KiB in the second.
  const auto tensors = tensorsOfBytes({1 << 20, 209716, 65536});
  Plan plan;
  plan.buckets = {{{0, 1}, (1 << 20) + 209716, 0, 0}, {{2}, 65536, 1, 0}};
  EXPECT_EQ(describePlan(plan, tensors), "2 buckets: [0-1] 1.2 MiB, [2] 64 KiB");

  PlannerOptions options;
  options.sliceElements = 1 << 18;  // 1 MiB slices
  const auto sliced = tensorsOfBytes({3 << 19, 512});
  EXPECT_EQ(describePlan(planWith("priority", sliced, LinearCommModel(0, 0), 1, options), sliced),
            "3 buckets (priority order, overlapping the next forward): [0] 1 MiB at 0 B p1, "
            "[0] 512 KiB at 1 MiB p1, [1] 512 B p0");
}

}  // namespace
}  // namespace imerge::distributed
