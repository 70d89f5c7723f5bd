// Measuring all-reduce cost: the short start-up measurement that `mgwfbp` and `imerge` plan
// with when no file from imerge-commbench is given.
#pragma once

#include <functional>
#include <vector>

#include "distributed/comm_model.h"
#include "distributed/communicator.h"

namespace imerge::distributed {

// Message sizes of the start-up measurement: 4 B to 16 MiB, dense between 1 and 64 KiB where
// the cost has its knee. Larger messages are extrapolated by the fitted model.
std::vector<size_t> startupMeasurementSizes();

// The median time of `repetitions` float all-reduces of each size among all ranks, each
// repetition counted at the slowest rank, after a barrier and one untimed warm-up per size,
// measured on the communication thread (measureAllreduceSweep with a fixed repetition count).
// Every rank takes part and gets the same figures.
std::vector<CommSample> measureAllreduce(Communicator& communicator,
                                         const std::vector<size_t>& sizes, int repetitions);

// ---- the full sweep of imerge-commbench ----------------------------------------------------

// The sizes of a full sweep from minBytes to maxBytes (both multiples of 4, 4 <= min <= max):
// two sizes per octave (2^k and 2^(k+1/2)), four per octave (2^(k+i/4)) between 1 and 64 KiB
// where Open MPI and NCCL switch algorithms, and both ends; increasing, each rounded to a
// multiple of 4 bytes.
// Throws imerge::Error naming the bad bound.
std::vector<size_t> sweepMeasurementSizes(size_t minBytes, size_t maxBytes);

// The repetitions a sweep gives `bytes`: all `repetitions` up to 1 MiB, then fewer in
// proportion to the size (about the same bytes moved at every larger size), never below
// min(3, repetitions). A function of the size alone, so that every rank runs the same count.
int sweepRepetitions(size_t bytes, int repetitions);

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

// How a sweep runs one size: `count` float all-reduces of `bytes / 4` elements (buffer large
// enough), returning each repetition's time on this rank. measureAllreduceSweep calls it on the
// communication thread with every rank at the same size; a backend brings its own (the host
// buffer version is hostAllreduceTimer, NCCL's lives in imerge-commbench).
using AllreduceTimer =
    std::function<std::vector<double>(CollectiveOps& ops, size_t bytes, int count)>;
// Times host-buffer all-reduces through `ops` (one buffer of maxBytes, reused).
AllreduceTimer hostAllreduceTimer(size_t maxBytes);

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
