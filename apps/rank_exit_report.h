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
// Ranks on other machines cannot be checked from here, and the message says so.
#pragma once

#include "distributed/comm/communicator.h"

namespace imerge::apps {

// Learns every rank's process id and host name (a collective: every rank calls it once, after
// MPI started) and installs handlers for SIGTERM, SIGINT and SIGHUP that print the report above
// to stderr and then end the process by the same signal, as it would have ended without them.
// The handlers use only async-signal-safe calls on text prepared here.
void installRankExitReport(distributed::Communicator& communicator);

}  // namespace imerge::apps
