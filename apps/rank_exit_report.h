// What a rank says when it is stopped by a signal in a data-parallel run: its own rank, the
// signal, and which other ranks on this machine have already exited. When one rank dies, mpirun
// stops the others with SIGTERM; without this, the only account of it is mpirun's own notice,
// and a user reading imerge-train's output cannot tell which rank went first or that the others
// were stopped because of it.
//
//   imerge-train: rank 0 of 2 (pid 4711 on node1) stopped by SIGTERM
//   imerge-train: rank 1 of 2 (pid 4712 on node1) had already exited (killed, or it failed);
//                 mpirun stops every rank when one ends early
//
// Ranks on other machines cannot be checked from here, and the message says so. The signal
// handlers themselves are apps/stop_signals.h's; they call the two functions below.
#pragma once

#include "distributed/comm/communicator.h"

namespace imerge::apps {

// Learns every rank's process id and host name (a collective: every rank calls it once, after
// MPI started) and prepares the report's text, so that a signal handler can write it without
// allocating.
void prepareRankExitReport(distributed::Communicator& communicator);

// Async-signal-safe. True when a rank on this machine has already exited: a stop signal then is
// mpirun ending the job, never a request to stop gracefully. False before the report is prepared.
bool anotherRankHasExited();

// Async-signal-safe. Writes the report for `signal` to stderr; nothing before it is prepared.
void writeRankExitReport(int signal);

}  // namespace imerge::apps
