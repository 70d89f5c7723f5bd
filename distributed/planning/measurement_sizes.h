// The message sizes an all-reduce cost is measured at, and how often each is repeated: the
// grid that the start-up measurement and imerge-commbench's sweep (runtime/comm_measurement.h)
// time, and that tests and the simulator sample models at. Pure arithmetic, no communication.
#pragma once

#include <cstddef>
#include <vector>

namespace imerge::distributed {

// Message sizes of the start-up measurement: 4 B to 16 MiB, dense between 1 and 64 KiB where
// the cost has its knee. Larger messages are extrapolated by the fitted model.
std::vector<size_t> startupMeasurementSizes();

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

}  // namespace imerge::distributed
