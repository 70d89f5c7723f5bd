// `imerge-overlap` (planners.h) and the simulator's forward phase (simulator.h): the planner
// against exhaustive search over every grouping and schedule, against the all-reduce
// strategies, and a split plan's simulated timeline against one computed by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "distributed/planning/collective_costs.h"
#include "distributed/planning/plan.h"
#include "distributed/planning/planner.h"
#include "distributed/planning/simulator.h"
#include "support/error_text.h"

namespace imerge::distributed {
namespace {

using imerge::testing::errorMessage;
using imerge::testing::expectContains;
using Schedule = Bucket::Schedule;

// A profile, the costs it is charged with and the worker count: planner and simulator agree
// on these, so the simulated iteration is the planner's objective.
struct Instance {
  ComputeProfile profile;
  CollectiveCosts costs;
  int workers = 4;
};

SimResult simulated(const Plan& plan, const Instance& instance) {
  SimOptions options;
  options.reduceScatter = instance.costs.reduceScatter.get();
  options.allGather = instance.costs.allGather.get();
  return simulate(plan, instance.profile, *instance.costs.allReduce, instance.workers, options);
}

Plan planned(const std::string& strategy, const Instance& instance) {
  const Plan plan =
      makePlanner(strategy, {})->plan(instance.profile, instance.costs, instance.workers);
  validatePlan(plan, instance.profile.tensors);
  return plan;
}

// Tensors of 4 B .. 4 MiB (log-uniform), backward up to 2 ms and forward up to 1 ms each, an
// optimizer and other time, a linear or knee-shaped all-reduce, and split halves that are the
// ring rule's or each 0.3-1.0 of the all-reduce (a network whose halves cost more than half).
Instance randomInstance(std::mt19937_64& random, size_t maxTensors) {
  Instance instance;
  const size_t count = std::uniform_int_distribution<size_t>(1, maxTensors)(random);
  std::uniform_real_distribution<double> logBytes(std::log(4.0), std::log(4.0 * (1 << 20)));
  std::uniform_real_distribution<double> backward(0, 2e-3), forward(0, 1e-3);
  for (size_t k = 0; k < count; ++k) {
    instance.profile.tensors.push_back({"t" + std::to_string(k),
                                        static_cast<size_t>(std::exp(logBytes(random))),
                                        backward(random)});
    instance.profile.forwardSecondsPerTensor.push_back(forward(random));
  }
  instance.profile.optimizerSeconds = std::uniform_real_distribution<double>(0, 2e-3)(random);
  instance.profile.otherSeconds = std::uniform_real_distribution<double>(0, 2e-3)(random);
  std::uniform_real_distribution<double> startup(1e-6, 1e-3), bandwidth(1e8, 1e10);
  std::shared_ptr<const CommModel> allReduce;
  if (std::uniform_int_distribution<int>(0, 1)(random) == 0) {
    allReduce = std::make_shared<LinearCommModel>(startup(random), 1 / bandwidth(random));
  } else {
    const double flat = startup(random);
    allReduce = std::make_shared<PiecewiseCommModel>(
        flat,
        std::vector<PiecewiseCommModel::Segment>{{8192, 2 * flat, 1 / bandwidth(random)},
                                                 {512 * 1024, 3 * flat, 1 / bandwidth(random)}});
  }
  if (std::uniform_int_distribution<int>(0, 1)(random) == 0) {
    instance.costs = ringSplitCosts(allReduce);
  } else {
    std::uniform_real_distribution<double> share(0.3, 1.0);
    instance.costs = {allReduce, std::make_shared<ScaledCommModel>(allReduce, share(random), "rs"),
                      std::make_shared<ScaledCommModel>(allReduce, share(random), "ag")};
  }
  instance.workers = std::uniform_int_distribution<int>(2, 16)(random);
  return instance;
}

// The least simulated iteration over every contiguous grouping and every schedule of each group.
double exhaustiveBest(const Instance& instance, Plan* bestPlan = nullptr) {
  const std::vector<TensorInfo>& tensors = instance.profile.tensors;
  const size_t count = tensors.size();
  double best = std::numeric_limits<double>::infinity();
  for (unsigned mask = 0; mask < (1u << (count - 1)); ++mask) {
    Plan grouping;
    grouping.overlapWithNextForward = true;
    for (size_t k = 0; k < count; ++k) {
      if (k == 0 || (mask >> (k - 1) & 1u)) grouping.buckets.emplace_back();
      grouping.buckets.back().tensors.push_back(k);
      grouping.buckets.back().bytes += tensors[k].bytes;
    }
    size_t labellings = 1;
    for (size_t g = 0; g < grouping.buckets.size(); ++g) labellings *= 3;
    for (size_t labels = 0; labels < labellings; ++labels) {
      Plan plan = grouping;
      for (size_t g = 0, rest = labels; g < plan.buckets.size(); ++g, rest /= 3) {
        plan.buckets[g].schedule = static_cast<Schedule>(rest % 3);
      }
      const double seconds = simulated(plan, instance).iterationSeconds;
      if (seconds < best && bestPlan) *bestPlan = plan;
      best = std::min(best, seconds);
    }
  }
  return best;
}

TEST(ImergeOverlapPlanner, EqualsExhaustiveSearchOverGroupingsAndSchedules) {
  std::mt19937_64 random(1515);
  for (int trial = 0; trial < 200; ++trial) {
    const Instance instance = randomInstance(random, 6);
    const Plan plan = planned("imerge-overlap", instance);
    EXPECT_EQ(plan.optimalityGapSeconds, 0);  // small fronts are never thinned
    Plan bestPlan;
    const double best = exhaustiveBest(instance, &bestPlan);
    ASSERT_NEAR(simulated(plan, instance).iterationSeconds, best, 1e-9 * best)
        << "trial " << trial << ", " << instance.profile.tensors.size() << " tensors, "
        << describePlan(plan, instance.profile.tensors) << "; best "
        << describePlan(bestPlan, instance.profile.tensors);
  }
}

// Zero backward and forward times (DataParallel's first plan, before anything is measured) and
// a startup that dominates: imerge's one bucket of both tensors is the best plan, and every
// boundary inside the sliced second tensor costs a second startup, above the bound. The planner
// must pass over those empty prefixes instead of refusing (it once threw "no grouping of the
// first 2 slices is within the bound").
TEST(ImergeOverlapPlanner, PassesOverSliceBoundariesThatCannotBeatTheBound) {
  Instance instance;
  instance.profile.tensors = {{"t0", 100, 0.0}, {"t1", 1000, 0.0}};
  instance.profile.forwardSecondsPerTensor = {0.0, 0.0};
  instance.costs = ringSplitCosts(std::make_shared<LinearCommModel>(1e-3, 1e-9));
  const Plan plan = makePlanner("imerge-overlap", {.sliceElements = 25})
                        ->plan(instance.profile, instance.costs, 4);
  validatePlan(plan, instance.profile.tensors);
  EXPECT_NEAR(simulated(plan, instance).iterationSeconds,
              simulated(planned("imerge", instance), instance).iterationSeconds, 1e-12);
}

// Two tensors of 1000 bytes, backward 1 ms each, forward 2 ms (t0) and 1 ms (t1), an all-reduce of
// 4 us per byte (4 ms for one tensor) and halves of 2 ms. By hand, from the start of backward:
// t0 is ready at 1 ms and reduce-scattered 1-3 ms; t1, ready at 2 ms, is all-reduced 3-7 ms; t0's
// all-gather follows, 7-9 ms. The next forward starts at 2 ms: t1's layer waits until 7 ms and
// runs 7-8 ms, t0's waits until 9 ms and runs 9-11 ms, so the next backward starts at 11 ms. Every
// other grouping and schedule takes 11 ms or longer (both split also 11, with one more bucket
// before the forward; whole 12 or 13; deferred 11-12), so the planner picks this one.
TEST(ImergeOverlapPlanner, PlansAndSimulatesAHandComputedTimeline) {
  Instance instance;
  instance.profile.tensors = {{"t0", 1000, 1e-3}, {"t1", 1000, 1e-3}};
  instance.profile.forwardSecondsPerTensor = {2e-3, 1e-3};
  instance.costs = ringSplitCosts(std::make_shared<LinearCommModel>(0, 4e-6));
  instance.workers = 2;
  const Plan plan = planned("imerge-overlap", instance);
  ASSERT_EQ(plan.buckets.size(), 2u);
  EXPECT_EQ(plan.buckets[0].schedule, Schedule::Split);
  EXPECT_EQ(plan.buckets[1].schedule, Schedule::Backward);
  const SimResult result = simulated(plan, instance);
  EXPECT_NEAR(result.iterationSeconds, 11e-3, 1e-12);
  EXPECT_NEAR(result.waitingSeconds, 6e-3, 1e-12);        // 2-7 ms and 8-9 ms
  EXPECT_NEAR(result.communicationSeconds, 8e-3, 1e-12);  // 2 + 4 + 2 ms
  // Step 1's collectives, measured from the start of its backward.
  std::vector<std::string> names;
  double backwardStart = -1;
  for (const SimEvent& event : result.trace) {
    if (event.step != 1) continue;
    if (event.category == std::string("backward") && backwardStart < 0) {
      backwardStart = event.startSeconds;
    }
  }
  for (const SimEvent& event : result.trace) {
    if (event.step != 1 || event.row != TraceRow::Communication) continue;
    names.push_back(event.name);
    const double start = event.startSeconds - backwardStart, end = event.endSeconds - backwardStart;
    if (event.category == std::string("reducescatter")) {
      EXPECT_NEAR(start, 1e-3, 1e-12);
      EXPECT_NEAR(end, 3e-3, 1e-12);
    } else if (event.category == std::string("allgather")) {
      EXPECT_NEAR(start, 7e-3, 1e-12);
      EXPECT_NEAR(end, 9e-3, 1e-12);
    } else {
      EXPECT_NEAR(start, 3e-3, 1e-12);
      EXPECT_NEAR(end, 7e-3, 1e-12);
    }
  }
  EXPECT_EQ(names, (std::vector<std::string>{"reduce-scatter bucket 0", "all-gather bucket 0",
                                             "all-reduce bucket 1"}));
}

TEST(Simulate, RefusesASplitPlanWithoutItsHalvesCosts) {
  Instance instance;
  instance.profile.tensors = {{"t0", 1000, 1e-3}};
  instance.profile.forwardSecondsPerTensor = {1e-3};
  Plan plan;
  plan.overlapWithNextForward = true;
  plan.buckets = {{{0}, 1000, 0, 0, Schedule::Split}};
  const LinearCommModel model(0, 1e-6);
  expectContains(errorMessage([&] { simulate(plan, instance.profile, model, 2); }),
                 "reduce-scatter and all-gather costs");
  plan.overlapWithNextForward = false;
  expectContains(errorMessage([&] { validatePlan(plan, instance.profile.tensors); }),
                 "overlaps it");
}

}  // namespace
}  // namespace imerge::distributed
