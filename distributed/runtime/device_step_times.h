// What one training step's device times mean for the breakdown and the compute profile: pure
// arithmetic over seconds read from CUDA events (device_step_events.h), testable on the CPU with
// made-up times (tests/distributed/runtime/device_step_times_test.cpp).
//
// All times are seconds on the device from the start of backward (the BackwardStart mark on the
// compute stream). With gradients on a GPU the figures mean:
//  - communication: each bucket's collective from its start to its end on the communication
//    stream (the start is when the stream reached it: its gradients were final and the previous
//    collective had ended);
//  - waiting: the compute stream standing still for communication, from the end of backward to
//    the end of the last collective (it waits there before the optimizer; nothing else waits);
//  - overlapped: communication while the compute stream was still running backward;
//  - compute: from the forward's start to the optimizer's end on the compute stream, less the
//    waiting (it includes the device's idle gaps when the host queues work more slowly than the
//    device runs it);
//  - forward: forward start to backward start; optimizer: from when the last average was in
//    place (the later of backward end and the last collective's end) to the optimizer's end.
// imerge-overlap plans (joinedAtBackwardEnd false) are not waited for at the end of backward:
// their buckets list backward's collectives only (all-reduces and reduce-scatters; the
// all-gathers and deferred all-reduces run unmarked during the next forward, which waits for
// each layer's bucket inside its own time), so waiting is zero and the optimizer starts at the
// end of backward.
// The host's clock is used for one thing: `backwardStart` anchors the device times, so that
// traces and breakdowns place them at the host's start of backward (the device ran later; the
// figures are differences and do not depend on the anchor).
#pragma once

#include <optional>
#include <vector>

#include "distributed/comm/communicator.h"
#include "distributed/runtime/comm_interval.h"

namespace imerge::distributed {

// One bucket's collective on the device.
struct DeviceBucketTimes {
  size_t bucket = 0;
  size_t bytes = 0;
  double start = 0, end = 0;
};

struct DeviceStepTimes {
  std::optional<double> forwardStart, backwardEnd, stepEnd;
  std::vector<DeviceBucketTimes> buckets;  // launch order
  bool joinedAtBackwardEnd = true;         // the compute stream waited for the last bucket
};

struct DeviceStepFigures {
  std::vector<CommInterval> intervals;  // per bucket, at backwardStart + device seconds
  std::vector<CommInterval> waits;      // at most one: backward end to the last collective's end
  double communicationSeconds = 0;
  double waitingSeconds = 0;
  double overlappedSeconds = 0;
  std::optional<double> computeSeconds;  // needs forwardStart and stepEnd
  std::optional<double> forwardSeconds;
  std::optional<double> optimizerSeconds;
};

DeviceStepFigures deviceStepFigures(const DeviceStepTimes& times,
                                    CommClock::time_point backwardStart);

}  // namespace imerge::distributed
