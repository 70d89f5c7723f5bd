#include "apps/rank_exit_report.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <string>
#include <vector>

#include "apps/signal_safe_write.h"

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

// Everything the handlers write, prepared before any may run and never changed after: a handler
// may not allocate.
struct PreparedReport {
  std::vector<std::pair<int, std::string>> stoppedBy;  // signal, "rank R ... stopped by SIGX"
  std::vector<PeerOnThisMachine> peers;
  std::string noneGoneLine;
};

// Set once, before any handler may read it, and never freed: the handlers may run at exit.
std::atomic<const PreparedReport*> prepared{nullptr};

void writeToStderr(const std::string& text) {
  writeToStderrFromHandler(text.data(), text.size());
}

// A process mpirun has reaped no longer exists; one that is still running (or exiting) does.
// mpirun reaps a dead rank before it stops the others.
bool hasExited(const PeerOnThisMachine& peer) {
  return kill(peer.pid, 0) != 0 && errno == ESRCH;
}

std::string describe(int rank, int size, const RankIdentity& identity) {
  return "rank " + std::to_string(rank) + " of " + std::to_string(size) + " (pid " +
         std::to_string(identity.pid) + " on " + identity.host + ")";
}

}  // namespace

void prepareRankExitReport(distributed::Communicator& communicator) {
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

  auto* report = new PreparedReport;
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
  prepared.store(report);
}

bool anotherRankHasExited() {
  const PreparedReport* report = prepared.load();
  if (!report) return false;
  const int savedErrno = errno;
  bool gone = false;
  for (const PeerOnThisMachine& peer : report->peers) gone = gone || hasExited(peer);
  errno = savedErrno;
  return gone;
}

void writeRankExitReport(int signal) {
  const PreparedReport* report = prepared.load();
  if (!report) return;
  const int savedErrno = errno;
  for (const auto& [handled, line] : report->stoppedBy) {
    if (handled == signal) writeToStderr(line);
  }
  bool anyGone = false;
  for (const PeerOnThisMachine& peer : report->peers) {
    if (hasExited(peer)) {
      writeToStderr(peer.goneLine);
      anyGone = true;
    }
  }
  if (!anyGone) writeToStderr(report->noneGoneLine);
  errno = savedErrno;
}

}  // namespace imerge::apps
