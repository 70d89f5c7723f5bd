// The Reducer's imerge-overlap buckets over real MPI (run by CTest with 2, 3 and 4 ranks):
// reduce-scatters during backward, all-gathers and deferred all-reduces after finish(), each
// bucket averaged exactly as an all-reduce would, against hand-computed means. The buckets'
// sizes include ones with fewer elements than ranks (empty blocks) and ones that do not divide
// by the rank count, and a split slice of one tensor.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "core/device.h"
#include "distributed/comm/mpi_communicator.h"
#include "distributed/runtime/reducer.h"
#include "support/mpi_test_world.h"
#include "support/plan_builders.h"

namespace imerge::distributed {
namespace {

Communicator* world = nullptr;

using Schedule = Bucket::Schedule;

// Rank r's gradient of parameter i, element e, in step s: (r + 1)(i + 1)(s + 1) + e / 2. Its mean
// over N ranks is (N + 1)/2 (i + 1)(s + 1) + e / 2, exact in float32 for these small values.
float gradientOf(int rank, size_t parameter, int64_t element, int step) {
  return static_cast<float>((rank + 1) * (parameter + 1) * (step + 1)) +
         static_cast<float>(element) / 2;
}
float meanOf(int ranks, size_t parameter, int64_t element, int step) {
  return static_cast<float>(ranks + 1) / 2 * static_cast<float>((parameter + 1) * (step + 1)) +
         static_cast<float>(element) / 2;
}

// Parameters p0..p4 of 5, 1, 2, 10 and 7 elements; backward order p4, p3, p2, p1, p0, so the
// flat buffer is p4 [0, 7), p3 [7, 17), p2 [17, 19), p1 [19, 20), p0 [20, 25). Buckets, in
// backward order: p4 all-reduced in backward; p3 split as two slices of 6 and 4 elements; p2
// and p1 (3 elements, fewer than 4 ranks) deferred before the next forward; p0 split.
Plan mixedPlan() {
  Plan plan;
  plan.overlapWithNextForward = true;
  plan.buckets = {
      {{0}, 7 * 4, 0, 0, Schedule::Backward},  {{1}, 6 * 4, 1, 0, Schedule::Split},
      {{1}, 4 * 4, 2, 6 * 4, Schedule::Split}, {{2, 3}, 3 * 4, 3, 0, Schedule::BeforeForward},
      {{4}, 5 * 4, 4, 0, Schedule::Split},
  };
  return plan;
}

TEST(ReducerOverMpi, SplitAndDeferredBucketsAverageLikeAnAllReduce) {
  auto parameters = testing::makeParameters({5, 1, 2, 10, 7});
  Reducer reducer(parameters, *world);
  CommTimer timer;
  reducer.setTimer(&timer);
  reducer.setPlan(mixedPlan(), testing::reversed(parameters.size()));
  const int rank = world->rank(), ranks = world->size();
  for (int step = 0; step < 3; ++step) {
    reducer.prepareForBackward(step);
    for (size_t index : {4, 3, 2, 1, 0}) {
      Tensor gradient = Tensor::empty(parameters[index].shape());
      for (int64_t e = 0; e < gradient.numel(); ++e) {
        gradient.data<float>()[e] = gradientOf(rank, index, e, step);
      }
      parameters[index].addGrad(gradient);
      reducer.onGradReady(index);
    }
    reducer.finish();
    // As the next forward's pre-hooks do: each layer waits for its own bucket, first layer first.
    for (size_t index = 0; index < parameters.size(); ++index) {
      reducer.waitForParameter(index);
      const std::vector<float> values = parameters[index].grad().toVector();
      for (size_t e = 0; e < values.size(); ++e) {
        ASSERT_EQ(values[e], meanOf(ranks, index, static_cast<int64_t>(e), step))
            << "p" << index << "[" << e << "] in step " << step << " on rank " << rank;
      }
    }
    reducer.waitAll();
    for (autograd::Variable& parameter : parameters) parameter.zeroGrad();
  }
  // Per step: an all-reduce (p4), three reduce-scatters and their all-gathers, and the deferred
  // all-reduce; the forward phase after every backward part, in forward order.
  const std::vector<CommInterval> intervals = timer.takeIntervals();
  ASSERT_EQ(intervals.size(), 3u * 8);
  using Kind = CollectiveKind;
  const std::vector<std::pair<size_t, Kind>> perStep = {
      {0, Kind::AllReduce},     {1, Kind::ReduceScatter}, {2, Kind::ReduceScatter},
      {4, Kind::ReduceScatter}, {4, Kind::AllGather},     {3, Kind::AllReduce},
      {2, Kind::AllGather},     {1, Kind::AllGather}};
  for (size_t i = 0; i < intervals.size(); ++i) {
    EXPECT_EQ(intervals[i].bucket, perStep[i % 8].first) << "collective " << i;
    EXPECT_EQ(intervals[i].kind, perStep[i % 8].second) << "collective " << i;
    if (i > 0) {
      EXPECT_LE(intervals[i - 1].end, intervals[i].start) << "one at a time, in order";
    }
  }
}

}  // namespace
}  // namespace imerge::distributed

int main(int argc, char** argv) {
  using namespace imerge::distributed;
  ::testing::InitGoogleTest(&argc, argv);
  imerge::setNumThreads(1);
  std::unique_ptr<MpiCommunicator> communicator =
      imerge::test::startMpiTestWorld("reducer_mpitest", {.timeoutSeconds = 60});
  if (!communicator) return 1;
  world = communicator.get();
  int64_t failed = RUN_ALL_TESTS() != 0;
  world->allreduceMax(&failed, 1);  // one verdict for the whole job
  communicator->shutdown();
  return static_cast<int>(failed);
}
