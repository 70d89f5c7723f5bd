// The stall check's message: which ranks reached a collective that timed out, which never did,
// and which wait elsewhere, from what each rank said (the MPI exchange is tested under mpirun,
// tests/apps/dist_rank_dies.sh with SIGSTOP).
#include "distributed/comm/stall_report.h"

#include <gtest/gtest.h>

namespace imerge::distributed {
namespace {

CollectivePosition at(int64_t sequence, const std::string& label) {
  return {sequence, CollectiveShape::of(CollectiveOperation::AllreduceSum, 100, 4, 0, label)};
}

TEST(StallReport, RankListsReadAsWords) {
  EXPECT_EQ(rankList({2}), "rank 2");
  EXPECT_EQ(rankList({0, 1}), "ranks 0 and 1");
  EXPECT_EQ(rankList({0, 1, 5}), "ranks 0, 1 and 5");
  EXPECT_EQ(rankList({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}), "ranks 0, 1, 2, 3, 4, 5, 6, 7 and 2 more");
}

TEST(StallReport, ARankThatSaidNothingDidNotReportReachingTheCollective) {
  const CollectivePosition mine = at(12, "bucket 3 of step 4");
  // Rank 0 of 4: rank 1 waited at the same collective, ranks 2 and 3 said nothing.
  EXPECT_EQ(describeStall({.rank = 0,
                           .mine = mine,
                           .heard = {std::nullopt, mine, std::nullopt, std::nullopt},
                           .graceSeconds = 3}),
            "ranks 2 and 3 did not report reaching it (no word from them in 3 s more: they are "
            "stopped, hung, far behind or gone; check their output for an earlier error); ranks "
            "0 and 1 were waiting at it (#12 of this job's collectives)");
  EXPECT_EQ(
      describeStall(
          {.rank = 1, .mine = mine, .heard = {std::nullopt, std::nullopt}, .graceSeconds = 0.5}),
      "rank 0 did not report reaching it (no word from it in 0.5 s more: it is stopped, "
      "hung, far behind or gone; check its output for an earlier error); rank 1 was "
      "waiting at it (#12 of this job's collectives)");
}

TEST(StallReport, ARankWaitingElsewhereIsNamedWithItsCollective) {
  EXPECT_EQ(describeStall({.rank = 0,
                           .mine = at(12, "bucket 3"),
                           .heard = {std::nullopt, at(11, "bucket 2")},
                           .graceSeconds = 3}),
            "rank 0 was waiting at it (#12 of this job's collectives); rank 1 waited at "
            "collective #11 instead, all-reduce of 100 x 4 bytes ('bucket 2') (the ranks no "
            "longer agree on the order of collectives)");
}

TEST(StallReport, EveryRankWaitingMeansMpiItselfFailed) {
  const CollectivePosition mine = at(3, "bucket 0");
  EXPECT_EQ(describeStall({.rank = 1, .mine = mine, .heard = {mine, std::nullopt, mine}}),
            "ranks 0, 1 and 2 were waiting at it (#3 of this job's collectives), so every rank "
            "reached it and MPI could not complete it (a network or MPI failure)");
}

// The stopped rank itself, once continued: its own wait stood still for seconds, so it says so
// instead of blaming MPI, although every rank had reached the collective.
TEST(StallReport, ARankThatWasStoppedItselfSaysSo) {
  const CollectivePosition mine = at(3, "bucket 0");
  EXPECT_EQ(describeStall(
                {.rank = 1, .mine = mine, .heard = {mine, std::nullopt}, .frozenSeconds = 12.4}),
            "this rank itself was not running for 12 s of the wait (stopped, by SIGSTOP or a "
            "debugger, or starved of CPU), so the other ranks waited for it; ranks 0 and 1 "
            "were waiting at it (#3 of this job's collectives)");
  // Milliseconds between tests are the normal pace, not a stop.
  EXPECT_EQ(
      describeStall({.rank = 1, .mine = mine, .heard = {mine, std::nullopt}, .frozenSeconds = 0.02})
          .find("this rank itself"),
      std::string::npos);
}

}  // namespace
}  // namespace imerge::distributed
