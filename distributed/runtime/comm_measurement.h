// Measuring all-reduce cost: the short start-up measurement that `mgwfbp` and `imerge` plan
// with when no file from imerge-commbench is given.
#pragma once

#include <functional>
#include <vector>

#include "distributed/comm/allreduce_timer.h"
#include "distributed/comm/communicator.h"
#include "distributed/planning/comm_model.h"
#include "distributed/planning/measurement_sizes.h"

namespace imerge::distributed {

// The median time of `repetitions` float all-reduces of each size among all ranks, each
// repetition counted at the slowest rank, after a barrier and one untimed warm-up per size,
// measured on the communication thread (measureAllreduceSweep with a fixed repetition count).
// Every rank takes part and gets the same figures.
std::vector<CommSample> measureAllreduce(Communicator& communicator,
                                         const std::vector<size_t>& sizes, int repetitions);

// ---- the full sweep of imerge-commbench ----------------------------------------------------

// One size of a sweep: the figures over its repetitions, each repetition counted at the slowest
// rank (the all-reduce is done when the last rank has its result).
struct AllreduceMeasurement {
  size_t bytes = 0;
  int workers = 0;
  int repetitions = 0;
  double medianSeconds = 0;
  double minSeconds = 0;
  double maxSeconds = 0;
  CommSample sample() const { return {bytes, workers, medianSeconds}; }
};

// measureAllreduce with another backend's timer (e.g. a DeviceCommunicator's, whose buffers
// must hold the largest size).
std::vector<CommSample> measureAllreduce(Communicator& communicator,
                                         const std::vector<size_t>& sizes, int repetitions,
                                         const AllreduceTimer& timer);

// For each size: a barrier, one untimed warm-up, then sweepRepetitions(bytes, repetitions)
// timed all-reduces, each repetition's time the maximum over the ranks. `onMeasured` (may be
// empty) is called on the communication thread after each size, for progress. Every rank takes
// part and gets the same figures.
std::vector<AllreduceMeasurement> measureAllreduceSweep(
    Communicator& communicator, const std::vector<size_t>& sizes, int repetitions,
    const AllreduceTimer& timer,
    const std::function<void(const AllreduceMeasurement&, size_t index)>& onMeasured = {});

}  // namespace imerge::distributed
