// When each bucket of a plan would be all-reduced on one communication channel that serves one
// all-reduce at a time, under a given cost model. This is the objective the mgwfbp and imerge
// planners reason about, and what tests use to compare plans; the simulator adds forward,
// optimizer and overlap on top of it.
//
// A bucket is ready when the last of its tensors is (ready times from readyTimes(), or the end
// of backward for every bucket when plan.startAfterBackward). The channel is free at time 0.
//   LaunchOrder::Fifo:     buckets go in plan order; bucket i starts at
//                          max(end of bucket i-1, ready time of bucket i).
//   LaunchOrder::Priority: whenever the channel is free, the ready bucket with the lowest
//                          priority value goes next (ties: the earlier bucket in the plan); when
//                          none is ready the channel waits for the next one. No preemption: a
//                          started all-reduce runs to its end.
// Each all-reduce lasts model.seconds(bucket.bytes, workers); a Split bucket (plan.h) occupies
// the channel for its reduce-scatter, reduceScatter->seconds(bucket.bytes, workers), and a
// BeforeForward bucket not at all (it starts and ends when it is ready); what they send before
// the next forward is the simulator's (simulator.h). A plan with Split buckets needs
// `reduceScatter`.
#pragma once

#include <vector>

#include "distributed/planning/comm_model.h"
#include "distributed/planning/plan.h"

namespace imerge::distributed {

struct BucketTiming {
  double readySeconds = 0;  // from the start of backward
  double startSeconds = 0;
  double endSeconds = 0;
};

// One entry per bucket, in plan order (not in launch order).
std::vector<BucketTiming> scheduleOnOneChannel(const Plan& plan,
                                               const std::vector<TensorInfo>& tensors,
                                               const CommModel& model, int workers,
                                               const CommModel* reduceScatter = nullptr);

// When the last all-reduce ends (0 for a plan with no buckets).
double fifoFinishTime(const Plan& plan, const std::vector<TensorInfo>& tensors,
                      const CommModel& model, int workers);

// How long `bucket` holds the channel during backward: its all-reduce under `allReduce`; Split,
// its reduce-scatter (refused naming the bucket when `reduceScatter` is null); BeforeForward, 0.
double backwardPartSeconds(const Bucket& bucket, size_t index, const CommModel& allReduce,
                           const CommModel* reduceScatter, int workers);

}  // namespace imerge::distributed
