// Which ranks reached a collective that timed out, as Horovod's stall check tells it: when a
// collective does not complete in time, each rank that waited at it tells the others its
// position (the how-manyth collective of the communicator, and what it is), and waits a short
// grace period for theirs. A rank that says nothing in that time has not reached the collective
// (it is stopped, hung, far behind or gone), and the time-out names it first, instead of
// guessing that "another rank has probably exited".
//
//   rank 2 did not report reaching it (no word from it in 3 s more: it is stopped, hung, far
//   behind or gone; check its output for an earlier error); ranks 0 and 1 were waiting at it
//   (#12 of this job's collectives)
//
// The exchange is the MPI communicator's (mpi_communicator.cpp); the record and the message
// need no MPI, and are tested without it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "distributed/comm/collective_shape.h"

namespace imerge::distributed {

// Where one rank's communicator stands: its collectives are numbered from 1 in the order they
// were posted, the same on every rank while the ranks agree. Plain bytes, sent as they are.
struct CollectivePosition {
  int64_t sequence = 0;
  CollectiveShape shape{};
};

// What one rank knows when its collective has timed out.
struct StallFacts {
  int rank = 0;
  CollectivePosition mine;  // the collective that timed out
  // heard[r]: what rank r said within graceSeconds; nothing when it said nothing (heard[rank]
  // itself is ignored).
  std::vector<std::optional<CollectivePosition>> heard;
  double graceSeconds = 0;
  // The longest time this rank's own wait loop did not run (normally milliseconds): seconds
  // mean this process was stopped (SIGSTOP, a debugger) or starved, and that the others timed
  // out on it rather than it on them.
  double frozenSeconds = 0;
};

// A frozen wait this long or longer is reported as this rank not running.
inline constexpr double kFrozenReportSeconds = 1.0;

std::string describeStall(const StallFacts& facts);

// "rank 2", "ranks 0 and 1", "ranks 0, 1 and 5", or the first 8 and "... and 24 more ranks".
std::string rankList(const std::vector<int>& ranks);

// Seconds as the time-out and stall messages write them ("%g": 10, 0.5, 2.5e-05).
std::string formatSeconds(double seconds);

}  // namespace imerge::distributed
