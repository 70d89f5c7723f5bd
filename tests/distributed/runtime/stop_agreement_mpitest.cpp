// StopAgreement under mpirun: a stop asked on one rank only, during step s, makes every rank
// stop after step s + 1 with that rank's code; the largest code wins when several ranks ask;
// nobody stops while nobody asks; and a world of one stops after the very step it was asked in.
//
// Run by CTest as `mpirun -np N stop_agreement_mpitest` for N = 2, 3; every rank runs every test
// and the exit status is the same on all ranks.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "distributed/runtime/stop_agreement.h"
#include "support/mpi_test_world.h"

namespace imerge::distributed {
namespace {

Communicator* world = nullptr;

// Runs `steps` steps; this rank is asked `code` from step `askedAt` on (never when negative).
// Returns the step after which afterStep() said stop (0 when it never did) and its code.
std::pair<int64_t, int> stepUntilStopped(Communicator* ranks, int64_t steps, int64_t askedAt,
                                         int code) {
  int64_t step = 0;
  StopAgreement agreement(ranks, [&] { return askedAt >= 0 && step >= askedAt ? code : 0; });
  for (step = 1; step <= steps; ++step) {
    if (const int agreed = agreement.afterStep(); agreed != 0) return {step, agreed};
  }
  return {0, 0};
}

TEST(StopAgreement, OneRankAsksEveryRankStopsAfterTheNextStep) {
  const int asking = world->size() - 1;
  const auto [step, code] = stepUntilStopped(world, 20, world->rank() == asking ? 7 : -1, 15);
  EXPECT_EQ(step, 8) << "rank " << world->rank();
  EXPECT_EQ(code, 15);
}

TEST(StopAgreement, TheLargestCodeWinsWhenSeveralRanksAsk) {
  // Rank r asks code 10 + r from step 4: every rank stops after step 5 with the last rank's.
  const auto [step, code] = stepUntilStopped(world, 20, 4, 10 + world->rank());
  EXPECT_EQ(step, 5);
  EXPECT_EQ(code, 10 + world->size() - 1);
}

TEST(StopAgreement, NobodyStopsWhileNobodyAsks) {
  EXPECT_EQ(stepUntilStopped(world, 30, -1, 15).first, 0);
}

TEST(StopAgreement, AWorldOfOneStopsAfterTheStepItWasAskedIn) {
  EXPECT_EQ(stepUntilStopped(nullptr, 20, 7, 2), (std::pair<int64_t, int>{7, 2}));
  SingleProcessCommunicator single;
  EXPECT_EQ(stepUntilStopped(&single, 20, 3, 2), (std::pair<int64_t, int>{3, 2}));
}

}  // namespace
}  // namespace imerge::distributed

int main(int argc, char** argv) {
  using namespace imerge::distributed;
  ::testing::InitGoogleTest(&argc, argv);
  std::unique_ptr<MpiCommunicator> communicator =
      imerge::test::startMpiTestWorld("stop_agreement_mpitest", {.timeoutSeconds = 60});
  if (!communicator) return 1;
  world = communicator.get();
  int64_t failed = RUN_ALL_TESTS() != 0;
  world->allreduceMax(&failed, 1);  // one verdict for the whole job
  communicator->shutdown();
  return static_cast<int>(failed);
}
