// The CPU-checkable parts of data parallelism on GPUs: what made-up device times mean for the
// breakdown (deviceStepFigures), and which GPU a rank gets or why it gets none (gpuForLocalRank).
#include "distributed/runtime/device_step_times.h"

#include <gtest/gtest.h>

#include "distributed/comm/device_communicator.h"
#include "support/error_text.h"

namespace imerge::distributed {
namespace {

double secondsBetween(CommClock::time_point a, CommClock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

TEST(DeviceStepFigures, SplitCommunicationIntoOverlappedAndWaited) {
  // Backward runs 0..10 ms on the device; three buckets: 2..4 (during backward), 8..12
  // (straddles its end), 12..15 (after it). Forward started 6 ms before backward, the optimizer
  // ended at 17 ms.
  DeviceStepTimes times;
  times.forwardStart = -6e-3;
  times.backwardEnd = 10e-3;
  times.stepEnd = 17e-3;
  times.buckets = {{0, 400, 2e-3, 4e-3}, {1, 800, 8e-3, 12e-3}, {2, 100, 12e-3, 15e-3}};
  const auto anchor = CommClock::now();
  const DeviceStepFigures f = deviceStepFigures(times, anchor);
  EXPECT_NEAR(f.communicationSeconds, 9e-3, 1e-12);
  EXPECT_NEAR(f.overlappedSeconds, 4e-3, 1e-12);  // 2 ms + 2 ms before backward's end
  EXPECT_NEAR(f.waitingSeconds, 5e-3, 1e-12);     // 10 -> 15 ms
  ASSERT_TRUE(f.computeSeconds && f.forwardSeconds && f.optimizerSeconds);
  EXPECT_NEAR(*f.computeSeconds, 23e-3 - 5e-3, 1e-12);  // forward start to optimizer end
  EXPECT_NEAR(*f.forwardSeconds, 6e-3, 1e-12);
  EXPECT_NEAR(*f.optimizerSeconds, 2e-3, 1e-12);  // 15 -> 17 ms
  ASSERT_EQ(f.intervals.size(), 3u);
  EXPECT_EQ(f.intervals[1].bucket, 1u);
  EXPECT_EQ(f.intervals[1].bytes, 800u);
  EXPECT_NEAR(secondsBetween(anchor, f.intervals[1].start), 8e-3, 1e-8);
  EXPECT_NEAR(secondsBetween(anchor, f.intervals[1].end), 12e-3, 1e-8);
  ASSERT_EQ(f.waits.size(), 1u);
  EXPECT_NEAR(secondsBetween(anchor, f.waits[0].start), 10e-3, 1e-8);
  EXPECT_NEAR(secondsBetween(anchor, f.waits[0].end), 15e-3, 1e-8);
}

TEST(DeviceStepFigures, FullyHiddenCommunicationCostsNoWait) {
  DeviceStepTimes times;
  times.backwardEnd = 10e-3;
  times.buckets = {{0, 4, 1e-3, 3e-3}, {1, 4, 3e-3, 9e-3}};
  const DeviceStepFigures f = deviceStepFigures(times, CommClock::now());
  EXPECT_NEAR(f.overlappedSeconds, f.communicationSeconds, 1e-12);
  EXPECT_EQ(f.waitingSeconds, 0.0);
  EXPECT_TRUE(f.waits.empty());
  EXPECT_FALSE(f.computeSeconds) << "without forward and optimizer marks";
  EXPECT_FALSE(f.optimizerSeconds);
}

TEST(DeviceStepFigures, DefaultStrategyWaitsForAllOfIt) {
  // Everything launched after backward: nothing overlaps, all of it is waited for.
  DeviceStepTimes times;
  times.forwardStart = -1e-3;
  times.backwardEnd = 5e-3;
  times.stepEnd = 9e-3;
  times.buckets = {{0, 4, 5e-3, 6e-3}, {1, 4, 6e-3, 8e-3}};
  const DeviceStepFigures f = deviceStepFigures(times, CommClock::now());
  EXPECT_EQ(f.overlappedSeconds, 0.0);
  EXPECT_NEAR(f.waitingSeconds, f.communicationSeconds, 1e-12);
  EXPECT_NEAR(*f.computeSeconds, 10e-3 - 3e-3, 1e-12);
  EXPECT_NEAR(*f.optimizerSeconds, 1e-3, 1e-12);
}

TEST(DeviceStepFigures, AForwardPhasePlanIsNotWaitedForAtBackwardEnd) {
  // imerge-overlap: backward's collectives run past backward's end (5 ms) to 8 ms, but the
  // compute stream does not wait there; the optimizer runs 5 -> 6 ms.
  DeviceStepTimes times;
  times.forwardStart = -1e-3;
  times.backwardEnd = 5e-3;
  times.stepEnd = 6e-3;
  times.buckets = {{0, 4, 2e-3, 6e-3}, {1, 4, 6e-3, 8e-3}};
  times.joinedAtBackwardEnd = false;
  const DeviceStepFigures f = deviceStepFigures(times, CommClock::now());
  EXPECT_NEAR(f.communicationSeconds, 6e-3, 1e-12);
  EXPECT_NEAR(f.overlappedSeconds, 3e-3, 1e-12);  // 2 -> 5 ms
  EXPECT_EQ(f.waitingSeconds, 0.0);
  EXPECT_TRUE(f.waits.empty());
  EXPECT_NEAR(*f.computeSeconds, 7e-3, 1e-12);  // forward start to step end, nothing waited
  EXPECT_NEAR(*f.optimizerSeconds, 1e-3, 1e-12);
  // The same times waited for at backward's end (any other plan): 3 ms waited, optimizer 0.
  times.joinedAtBackwardEnd = true;
  const DeviceStepFigures joined = deviceStepFigures(times, CommClock::now());
  EXPECT_NEAR(joined.waitingSeconds, 3e-3, 1e-12);
  EXPECT_EQ(*joined.optimizerSeconds, 0.0);
}

TEST(GpuForLocalRank, OneGpuPerRankModuloTheCount) {
  EXPECT_EQ(gpuForLocalRank(0, 4, 4, true, "nccl"), 0);
  EXPECT_EQ(gpuForLocalRank(3, 4, 4, true, "nccl"), 3);
  EXPECT_EQ(gpuForLocalRank(1, 2, 8, true, "nccl"), 1);
  // Sharing through host copies: round-robin.
  EXPECT_EQ(gpuForLocalRank(0, 3, 1, false, "mpi"), 0);
  EXPECT_EQ(gpuForLocalRank(2, 3, 1, false, "mpi"), 0);
  EXPECT_EQ(gpuForLocalRank(3, 4, 2, false, "mpi"), 1);
}

TEST(GpuForLocalRank, NcclRefusesMoreRanksThanGpus) {
  const std::string message = testing::errorMessage([] { gpuForLocalRank(1, 2, 1, true, "nccl"); });
  testing::expectContains(message, "--dist-backend nccl: 2 ranks on this machine but only 1 GPU");
  testing::expectContains(message, "refuses two ranks on one GPU");
  testing::expectContains(message, "mpirun -np 1");
  testing::expectContains(message, "--dist-backend mpi");
}

TEST(GpuForLocalRank, NoGpuIsAnErrorQuotingWhy) {
  const std::string message = testing::errorMessage(
      [] { gpuForLocalRank(0, 2, 0, false, "mpi", "CUDA driver version is insufficient"); });
  testing::expectContains(message,
                          "--dist-backend mpi with --device cuda: local rank 0 has no "
                          "usable GPU (CUDA driver version is insufficient)");
}

}  // namespace
}  // namespace imerge::distributed
