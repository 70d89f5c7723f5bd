#include "distributed/comm/stall_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace imerge::distributed {

namespace {
constexpr size_t kMostRanksNamed = 8;
}  // namespace

std::string rankList(const std::vector<int>& ranks) {
  if (ranks.empty()) return "no rank";
  std::string text = ranks.size() == 1 ? "rank " : "ranks ";
  const size_t named = std::min(ranks.size(), kMostRanksNamed);
  for (size_t i = 0; i < named; ++i) {
    if (i > 0) text += (i + 1 == named && named == ranks.size()) ? " and " : ", ";
    text += std::to_string(ranks[i]);
  }
  if (named < ranks.size()) text += " and " + std::to_string(ranks.size() - named) + " more";
  return text;
}

std::string describeStall(const StallFacts& facts) {
  std::vector<int> silent, arrived;
  std::string elsewhere;  // ranks that waited at another collective, each named with it
  for (int r = 0; r < static_cast<int>(facts.heard.size()); ++r) {
    const std::optional<CollectivePosition>& theirs = facts.heard[static_cast<size_t>(r)];
    if (r == facts.rank) {
      arrived.push_back(r);
    } else if (!theirs) {
      silent.push_back(r);
    } else if (theirs->sequence == facts.mine.sequence) {
      arrived.push_back(r);
    } else {
      elsewhere += "; rank " + std::to_string(r) + " waited at collective #" +
                   std::to_string(theirs->sequence) + " instead, " + theirs->shape.describe() +
                   " (the ranks no longer agree on the order of collectives)";
    }
  }
  const bool frozen = facts.frozenSeconds >= kFrozenReportSeconds;
  std::string text;
  if (frozen) {
    text = "this rank itself was not running for " +
           formatSeconds(std::round(facts.frozenSeconds)) +
           " s of the wait (stopped, by SIGSTOP or a debugger, or starved of CPU), so the other "
           "ranks waited for it; ";
  }
  if (!silent.empty()) {
    const bool one = silent.size() == 1;
    text += rankList(silent) + " did not report reaching it (no word from " +
            (one ? "it" : "them") + " in " + formatSeconds(facts.graceSeconds) +
            " s more: " + (one ? "it is" : "they are") +
            " stopped, hung, far behind or gone; check " + (one ? "its" : "their") +
            " output for an earlier error); ";
  }
  text += rankList(arrived) + (arrived.size() == 1 ? " was" : " were") + " waiting at it (#" +
          std::to_string(facts.mine.sequence) + " of this job's collectives)";
  if (silent.empty() && elsewhere.empty() && !frozen) {
    text +=
        ", so every rank reached it and MPI could not complete it (a network or MPI "
        "failure)";
  }
  return text + elsewhere;
}

std::string formatSeconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", seconds);
  return text;
}

}  // namespace imerge::distributed
