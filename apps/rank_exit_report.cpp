#include "apps/rank_exit_report.h"

#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <string>
#include <vector>

namespace imerge::apps {
namespace {

// One rank's process, as every rank learns it at start-up.
struct RankIdentity {
  long pid = 0;
  std::string host;
};

struct PeerOnThisMachine {
  pid_t pid;
  std::string goneLine;
};

// Everything the handler writes, prepared before it is installed and never changed after: the
// handler may not allocate.
struct PreparedReport {
  std::vector<std::pair<int, std::string>> stoppedBy;  // signal, "rank R ... stopped by SIGX"
  std::vector<PeerOnThisMachine> peers;
  std::string noneGoneLine;
};

const PreparedReport* prepared = nullptr;  // set once, lives until the process ends

void writeToStderr(const std::string& text) {
  const char* next = text.data();
  size_t left = text.size();
  while (left > 0) {
    const ssize_t written = write(STDERR_FILENO, next, left);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return;
    next += written;
    left -= static_cast<size_t>(written);
  }
}

void onStopSignal(int signal) {
  const int savedErrno = errno;
  for (const auto& [handled, line] : prepared->stoppedBy) {
    if (handled == signal) writeToStderr(line);
  }
  bool anyGone = false;
  for (const PeerOnThisMachine& peer : prepared->peers) {
    // A process mpirun has reaped no longer exists; one that is still running (or exiting)
    // does. mpirun reaps a dead rank before it stops the others.
    if (kill(peer.pid, 0) != 0 && errno == ESRCH) {
      writeToStderr(peer.goneLine);
      anyGone = true;
    }
  }
  if (!anyGone) writeToStderr(prepared->noneGoneLine);
  errno = savedErrno;
  // End as the signal would have ended the process: the exit status still says which signal.
  struct sigaction fallback = {};
  fallback.sa_handler = SIG_DFL;
  sigaction(signal, &fallback, nullptr);
  raise(signal);
}

std::string describe(int rank, int size, const RankIdentity& identity) {
  return "rank " + std::to_string(rank) + " of " + std::to_string(size) + " (pid " +
         std::to_string(identity.pid) + " on " + identity.host + ")";
}

}  // namespace

void installRankExitReport(distributed::Communicator& communicator) {
  const int rank = communicator.rank(), size = communicator.size();
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  // "pid host" from every rank.
  std::vector<RankIdentity> identities;
  for (const std::string& text :
       communicator.allgatherText(std::to_string(getpid()) + " " + host)) {
    const size_t space = text.find(' ');
    identities.push_back({std::stol(text.substr(0, space)), text.substr(space + 1)});
  }
  const RankIdentity& own = identities[static_cast<size_t>(rank)];

  auto* report = new PreparedReport;  // deliberately never freed: the handlers may run at exit
  const std::string self = describe(rank, size, own);
  // A new line first: the progress bar may be half-way through its line.
  for (const auto& [signal, name] :
       {std::pair{SIGTERM, "SIGTERM"}, std::pair{SIGINT, "SIGINT"}, std::pair{SIGHUP, "SIGHUP"}}) {
    report->stoppedBy.emplace_back(signal,
                                   "\nimerge-train: " + self + " stopped by " + name + "\n");
  }
  bool othersElsewhere = false;
  for (int peer = 0; peer < size; ++peer) {
    if (peer == rank) continue;
    const RankIdentity& identity = identities[static_cast<size_t>(peer)];
    if (identity.host != own.host) {
      othersElsewhere = true;
      continue;
    }
    report->peers.push_back(
        {static_cast<pid_t>(identity.pid),
         "imerge-train: " + describe(peer, size, identity) +
             " had already exited (killed, or it failed); mpirun stops every rank when one "
             "ends early\n"});
  }
  report->noneGoneLine =
      "imerge-train: every other rank on this machine was still running: the "
      "signal came from outside the job (kill, or Ctrl-C on mpirun)";
  if (othersElsewhere)
    report->noneGoneLine += "; ranks on other machines cannot be checked from here";
  report->noneGoneLine += "\n";
  prepared = report;

  struct sigaction action = {};
  action.sa_handler = onStopSignal;
  sigemptyset(&action.sa_mask);
  for (int signal : {SIGTERM, SIGINT, SIGHUP}) sigaction(signal, &action, nullptr);
}

}  // namespace imerge::apps
