// One channel's schedule when compute and communication share the worker's cores: the
// contention a real run on shared CPUs (or a host TCP stack) pays, and scheduleOnOneChannel
// (channel_schedule.h) does not charge. Measured on this machine over 1 Gbit/s links at 4 ranks
// (docs/scalability.md): an all-reduce costs 1.1x (16 MiB) to 5x (1 KiB) what it costs on idle
// cores while the other threads compute, because the communication thread waits for a core.
//
// The model. Two things progress at rates that depend on each other:
//   compute   backward's tensors one after another, tensor k taking its backwardSeconds at
//             full speed and `computeSlowdown` times as long while an all-reduce is in flight;
//   channel   the plan's buckets in scheduleOnOneChannel's order rules (FIFO in plan order, or
//             Priority among the ready buckets, no preemption); a bucket's all-reduce progresses
//             at 1 / besideCompute.seconds(bytes) of its work per second while the worker
//             computes and at 1 / idle.seconds(bytes) while it does not (after backward, when
//             the worker waits in finish()). With `computesAfterBackward` (overlap plans: the
//             next forward runs beside the last slices) the worker counts as computing
//             throughout.
// The schedule is an exact event simulation of these piecewise-constant rates. With
// besideCompute equal to idle and computeSlowdown 1 it is scheduleOnOneChannel's (a test
// checks this), up to rounding.
#pragma once

#include <vector>

#include "distributed/planning/channel_schedule.h"
#include "distributed/planning/comm_model.h"
#include "distributed/planning/plan.h"

namespace imerge::distributed {

// What contention costs on a cluster, at one worker count (imerge-commbench --beside-compute).
struct Contention {
  // An all-reduce's cost while the worker computes beside it; null: no contention modelled.
  const CommModel* besideCompute = nullptr;
  // How many times longer compute takes while an all-reduce is in flight (at least 1). A
  // compute profile measured in a run that communicated (imerge-train --dist --profile)
  // already holds this slowdown and must be simulated with 1.
  double computeSlowdown = 1;
};

struct ContendedSchedule {
  std::vector<BucketTiming> buckets;  // plan order, seconds from the start of backward
  std::vector<double> readySeconds;   // when tensor k's gradient is final (readyTimes' shape)
};

// The plan's schedule under `idle` (the cost with the worker waiting) and contention (its
// besideCompute must be set; computeSlowdown >= 1). A Split bucket's reduce-scatter is charged
// as reduceScatter / idle of an all-reduce of its bytes, at either rate: contention is measured
// for all-reduces only, and a half of one is taken to suffer it alike.
ContendedSchedule scheduleBesideCompute(const Plan& plan, const std::vector<TensorInfo>& tensors,
                                        const CommModel& idle, const Contention& contention,
                                        bool computesAfterBackward, int workers,
                                        const CommModel* reduceScatter = nullptr);

}  // namespace imerge::distributed
