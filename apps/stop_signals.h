// What SIGINT, SIGTERM, SIGHUP and SIGUSR1 do to imerge-train.
//
// - Outside the training loop, SIGINT, SIGTERM and SIGHUP end the process at once, as their
//   default action does (after the rank report of apps/rank_exit_report.h in a data-parallel
//   run).
// - Inside it (a GracefulStopWindow is alive), the first SIGINT or SIGTERM only asks: the loop
//   finishes its step, every rank agrees on the stop (distributed/runtime/stop_agreement.h), the
//   main rank saves a checkpoint when --checkpoint-dir is set, and the run says how to resume and
//   exits with 128 + the signal's number. A second SIGINT or SIGTERM ends the process at once.
// - SIGUSR1 only ever asks, wherever it arrives. mpirun forwards it to every rank, so
//   `kill -USR1 <mpirun's pid>` stops a data-parallel job gracefully; mpirun turns its own
//   SIGINT and SIGTERM into a SIGTERM for the ranks followed by a SIGKILL about a second later,
//   too soon for a step and a checkpoint.
// - A SIGINT or SIGTERM that arrives after a rank on this machine has exited is mpirun ending the
//   job: it ends the process at once, whatever the loop is doing.
// - SIGHUP (the terminal is gone) always ends the process at once.
#pragma once

#include <string>

namespace imerge::apps {

// Installs the handlers; once, first thing in main. Without `graceful` (imerge-train's
// --graceful-stop false), SIGUSR1 keeps its default action and no window may open.
void installStopSignals(bool graceful);

// The signal that asked the loop to stop (SIGINT, SIGTERM or SIGUSR1), or 0 when none did.
int stopRequestedBy();

// "SIGTERM", "SIGINT", ...
std::string signalName(int signal);

// While one is alive, the first SIGINT or SIGTERM asks for a stop instead of ending the
// process. `who` names this process in the notice a signal prints ("rank 1 of 2", or empty).
class GracefulStopWindow {
 public:
  explicit GracefulStopWindow(const std::string& who);
  ~GracefulStopWindow();
  GracefulStopWindow(const GracefulStopWindow&) = delete;
  GracefulStopWindow& operator=(const GracefulStopWindow&) = delete;
};

}  // namespace imerge::apps
