// The MPI communicator under mpirun (2 and 3 ranks): results of sum, max, bitwise-and and
// broadcast against hand-computed values, FIFO order of many asynchronous all-reduces, buffers
// large enough to be split into several MPI calls, and the time-out.
//
// One MpiCommunicator serves every test of the process (MPI starts once per process); every
// rank runs every test in the same order, and only rank 0 prints. The process's exit code is its
// own GoogleTest result; mpirun fails when any rank fails.
//
// The time-out test must stay LAST: ranks other than 0 skip one collective, so rank 0's times
// out after 2 s and its communicator is failed from then on. To still end cleanly with
// MPI_Finalize, the other ranks then join that same collective late (after 5 s); rank 0's
// communicator keeps testing the abandoned request, which completes, and shutdown() finalises.
// The buffer of that collective therefore lives until after shutdown(), and main() checks the
// late result on rank 0 as well.
//
// `--check-destructor` runs a different program: rank 0 destroys its communicator while an
// all-reduce that rank 1 never joins is waiting (no time-out). The destructor must return
// promptly and not std::terminate; the process then exits without MPI_Finalize (mpirun reports
// that, so CTest checks the printed line, not the exit code: its pass pattern requires "within
// 2 s", "abandoned" and "failed", and each of them has a "NOT" form the fail pattern catches).
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "distributed/comm/mpi_communicator.h"
#include "support/mpi_test_world.h"

namespace imerge::distributed {
namespace {

MpiCommunicator* world = nullptr;

// The buffer of the collective that times out on rank 0 (see the file comment).
std::vector<float> lateBuffer;

float triangle(int ranks) {
  return ranks * (ranks + 1) / 2.0f;
}  // 1 + 2 + ... + ranks

TEST(MpiCommunicator, WorldMatchesMpirun) {
  ASSERT_TRUE(launchedByMpirun());
  const char* size = std::getenv("OMPI_COMM_WORLD_SIZE");
  ASSERT_NE(size, nullptr);
  EXPECT_EQ(world->size(), std::atoi(size));
  EXPECT_EQ(world->rank(), std::atoi(std::getenv("OMPI_COMM_WORLD_RANK")));
  EXPECT_EQ(localRankCount(), world->size());  // every rank on this machine
  EXPECT_EQ(localRank(), world->rank());
  EXPECT_EQ(world->backendName(), "mpi");
  EXPECT_FALSE(world->failed());
}

TEST(MpiCommunicator, AllreduceSumMatchesHandComputedValues) {
  const int rank = world->rank();
  // rank 0: {1, 2, -3, 0.5}, rank 1: {10, 20, 30, 0.25}, rank 2: {100, 200, 300, 0.125}
  const float scale = rank == 0 ? 1.0f : rank == 1 ? 10.0f : 100.0f;
  std::vector<float> data{scale, 2 * scale, rank == 0 ? -3.0f : 3 * scale,
                          0.5f / static_cast<float>(1 << rank)};
  world->allreduceSumAsync(data.data(), data.size(), "hand-computed")->wait();
  if (world->size() == 2) {
    EXPECT_EQ(data, (std::vector<float>{11, 22, 27, 0.75f}));
  } else if (world->size() == 3) {
    EXPECT_EQ(data, (std::vector<float>{111, 222, 327, 0.875f}));
  } else {
    GTEST_SKIP() << "hand-computed values exist for 2 and 3 ranks";
  }
}

TEST(MpiCommunicator, AllreduceSumOfALongerBuffer) {
  const int rank = world->rank(), ranks = world->size();
  std::vector<float> data(10007);  // odd length, nothing divides it evenly
  for (size_t i = 0; i < data.size(); ++i) data[i] = (rank + 1) * static_cast<float>(i % 13);
  world->allreduceSumAsync(data.data(), data.size(), "longer")->wait();
  for (size_t i = 0; i < data.size(); ++i) {
    ASSERT_EQ(data[i], triangle(ranks) * static_cast<float>(i % 13)) << "element " << i;
  }
}

TEST(MpiCommunicator, AllreduceMaxOfInt64) {
  const int64_t rank = world->rank();
  // Values past 2^53 check that nothing goes through double.
  std::vector<int64_t> data{rank, -rank, (int64_t{1} << 60) + rank, 5, -(int64_t{1} << 62)};
  world->allreduceMax(data.data(), data.size());
  const int64_t last = world->size() - 1;
  EXPECT_EQ(data,
            (std::vector<int64_t>{last, 0, (int64_t{1} << 60) + last, 5, -(int64_t{1} << 62)}));
  if (world->size() == 2) {
    EXPECT_EQ(data[0], 1);
  }
  if (world->size() == 3) {
    EXPECT_EQ(data[2], (int64_t{1} << 60) + 2);
  }
}

// The figures a training loop adds up over ranks: float64 sums, means and maxima, int64 sums.
// rank r contributes {r + 0.25, -r, 1e300 / (r + 1)} and {r, 2^60 + r}; 2^60 + r summed over
// ranks needs every bit of an int64 and none of a double.
TEST(MpiCommunicator, AllreduceSumAverageAndMaxOfFloat64AndInt64) {
  const int rank = world->rank(), ranks = world->size();
  const double r = rank;
  std::vector<double> sum{r + 0.25, -r, 1e300 / (r + 1)};
  std::vector<double> mean = sum, max = sum;
  world->allreduceSum(sum.data(), sum.size());
  world->allreduceAverage(mean.data(), mean.size());
  world->allreduceMax(max.data(), max.size());
  const double ranksTriangle = ranks * (ranks - 1) / 2.0;  // 0 + 1 + ... + (ranks - 1)
  EXPECT_EQ(sum[0], ranksTriangle + 0.25 * ranks);
  EXPECT_EQ(sum[1], -ranksTriangle);
  EXPECT_EQ(mean[0], (ranksTriangle + 0.25 * ranks) / ranks);
  EXPECT_EQ(mean[1], -ranksTriangle / ranks);
  EXPECT_EQ(max[0], ranks - 1 + 0.25);
  EXPECT_EQ(max[1], 0.0);
  EXPECT_EQ(max[2], 1e300);
  std::vector<int64_t> counts{rank, (int64_t{1} << 60) + rank};
  world->allreduceSum(counts.data(), counts.size());
  const auto triangleCount = static_cast<int64_t>(ranksTriangle);
  EXPECT_EQ(counts,
            (std::vector<int64_t>{triangleCount, ranks * (int64_t{1} << 60) + triangleCount}));
}

TEST(MpiCommunicator, AllreduceBitwiseAndOfBytes) {
  const int rank = world->rank();
  // Byte 1 clears bit `rank`; byte 2 keeps the high nibble and sets bit `rank`.
  std::vector<uint8_t> flags{0xff, static_cast<uint8_t>(0xff ^ (1 << rank)),
                             static_cast<uint8_t>(0xf0 | (1 << rank)), 0x00};
  world
      ->submit("flags",
               [&](CollectiveOps& ops) { ops.allreduceBitwiseAnd(flags.data(), flags.size()); })
      ->wait();
  if (world->size() == 2) {
    EXPECT_EQ(flags, (std::vector<uint8_t>{0xff, 0xfc, 0xf0, 0x00}));
  } else if (world->size() == 3) {
    EXPECT_EQ(flags, (std::vector<uint8_t>{0xff, 0xf8, 0xf0, 0x00}));
  }
}

TEST(MpiCommunicator, BroadcastFromFirstAndLastRank) {
  for (int root : {0, world->size() - 1}) {
    char text[32] = {};
    if (world->rank() == root) {
      std::snprintf(text, sizeof text, "plan from rank %d", root);
    } else {
      std::strcpy(text, "stale");
    }
    world->broadcast(text, sizeof text, root);
    EXPECT_EQ(std::string(text), "plan from rank " + std::to_string(root));
  }
}

TEST(MpiCommunicator, BroadcastRejectsARootOutsideTheWorld) {
  char byte = 0;
  try {
    world
        ->submit("bad root",
                 [&](CollectiveOps& ops) {
                   // Caught inside the task, so the communicator is not failed by it.
                   try {
                     ops.broadcast(&byte, 1, world->size());
                   } catch (const Error& e) {
                     EXPECT_NE(std::string(e.what()).find("root"), std::string::npos) << e.what();
                     return;
                   }
                   ADD_FAILURE() << "broadcast to a root outside the world should throw";
                 })
        ->wait();
  } catch (const Error& e) {
    FAIL() << e.what();
  }
  EXPECT_FALSE(world->failed());
}

TEST(MpiCommunicator, BarrierSeparatesRanks) {
  // Rank 0 arrives late; nobody can leave the barrier before it arrived.
  const auto before = CommClock::now();
  if (world->rank() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  world->barrier();
  EXPECT_GE(CommClock::now() - before, std::chrono::milliseconds(190));
}

TEST(MpiCommunicator, ManyAsyncAllreducesCompleteInSubmissionOrder) {
  const int rank = world->rank(), ranks = world->size();
  constexpr int kWorks = 300;
  // Sizes cycle from tiny to beyond Open MPI's small-message switch (about 10 KB).
  std::vector<std::vector<float>> buffers(kWorks);
  std::vector<int> order;  // written only on the communication thread
  std::vector<WorkHandle> works;
  for (int i = 0; i < kWorks; ++i) {
    buffers[i].assign(1 + (i * 37) % 5000, static_cast<float>(i * (rank + 1)));
    works.push_back(world->allreduceSumAsync(buffers[i].data(), buffers[i].size(),
                                             "bucket " + std::to_string(i)));
    if (i % 50 == 0) {
      works.push_back(world->submit("marker " + std::to_string(i),
                                    [&order, i](CollectiveOps&) { order.push_back(i); }));
    }
  }
  for (auto& work : works) work->wait();
  for (size_t k = 1; k < works.size(); ++k) {
    ASSERT_GE(works[k]->started(), works[k - 1]->finished()) << works[k]->label();
  }
  for (int i = 0; i < kWorks; ++i) {
    const float expected = static_cast<float>(i) * triangle(ranks);
    for (float value : buffers[i]) ASSERT_EQ(value, expected) << "bucket " << i;
  }
  EXPECT_EQ(order, (std::vector<int>{0, 50, 100, 150, 200, 250}));
}

TEST(MpiCommunicator, OneTaskMayRunSeveralCollectives) {
  const int rank = world->rank(), ranks = world->size();
  std::vector<float> sums(3, static_cast<float>(rank + 1));
  int64_t maxRank = rank;
  uint32_t token = rank == 0 ? 0xc0ffee : 0;
  world
      ->submit("negotiate and send",
               [&](CollectiveOps& ops) {
                 ops.allreduceMax(&maxRank, 1);
                 ops.broadcast(&token, sizeof token, 0);
                 ops.allreduceSum(sums.data(), sums.size());
                 ops.barrier();
               })
      ->wait();
  EXPECT_EQ(maxRank, ranks - 1);
  EXPECT_EQ(token, 0xc0ffeeu);
  EXPECT_EQ(sums, std::vector<float>(3, triangle(ranks)));
}

TEST(MpiCommunicator, LargeBuffer) {
  const int rank = world->rank(), ranks = world->size();
  const size_t count = size_t{64} << 20 >> 2;  // 64 MiB of floats
  std::vector<float> data(count);
  for (size_t i = 0; i < count; ++i) data[i] = static_cast<float>((i & 1023) * (rank + 1));
  world->allreduceSumAsync(data.data(), count, "64 MiB")->wait();
  for (size_t i = 0; i < count; ++i) {
    ASSERT_EQ(data[i], static_cast<float>(i & 1023) * triangle(ranks)) << "element " << i;
  }
}

TEST(MpiCommunicator, BuffersBeyondOneCallAreSplit) {
  // The split that a buffer of more than 2^31-1 elements needs, exercised at a size a test can
  // afford by lowering the per-call limit to a number that divides nothing evenly.
  const int rank = world->rank(), ranks = world->size();
  world->setMaxElementsPerCall(100003);
  std::vector<float> sums(1000000);
  for (size_t i = 0; i < sums.size(); ++i) sums[i] = static_cast<float>((i % 97) * (rank + 1));
  std::vector<int64_t> maxima(250001, rank);
  std::vector<uint8_t> bytes(300007, rank == 0 ? 0 : 0x5a);
  if (rank == 0) {
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 31);
  }
  std::vector<uint8_t> expectedBytes(bytes.size());
  for (size_t i = 0; i < bytes.size(); ++i) expectedBytes[i] = static_cast<uint8_t>(i * 31);
  world->allreduceSumAsync(sums.data(), sums.size(), "split sum")->wait();
  world->allreduceMax(maxima.data(), maxima.size());
  world->broadcast(bytes.data(), bytes.size(), 0);
  world->setMaxElementsPerCall(2147483647);
  for (size_t i = 0; i < sums.size(); ++i) {
    ASSERT_EQ(sums[i], static_cast<float>(i % 97) * triangle(ranks)) << "element " << i;
  }
  EXPECT_EQ(maxima, std::vector<int64_t>(maxima.size(), ranks - 1));
  EXPECT_EQ(bytes, expectedBytes);
}

TEST(MpiCommunicator, AllgatherGivesEveryRanksValueInRankOrder) {
  struct Figures {
    double loss;
    int64_t rank;
  };
  const int rank = world->rank();
  const std::vector<Figures> all = world->allgather(Figures{0.5 + rank, rank});
  ASSERT_EQ(all.size(), static_cast<size_t>(world->size()));
  for (int r = 0; r < world->size(); ++r) {
    EXPECT_EQ(all[r].loss, 0.5 + r);
    EXPECT_EQ(all[r].rank, r);
  }
  // Texts of different lengths, the empty one included.
  const std::vector<std::string> texts =
      world->allgatherText(rank == 1 ? std::string() : std::string(rank + 3, 'a' + rank));
  for (int r = 0; r < world->size(); ++r) {
    EXPECT_EQ(texts[r], r == 1 ? std::string() : std::string(r + 3, 'a' + r)) << "rank " << r;
  }
}

// LAST (see the file comment): rank 0 is failed afterwards.
TEST(MpiCommunicator, TimeOutNamesTheLabelAndRank) {
  const int rank = world->rank(), ranks = world->size();
  lateBuffer.assign(1024, static_cast<float>(rank + 1));
  world->barrier();
  if (rank == 0) {
    world->setTimeoutSeconds(2);
    const auto start = CommClock::now();
    auto work = world->allreduceSumAsync(lateBuffer.data(), lateBuffer.size(), "late bucket");
    try {
      work->wait();
      FAIL() << "the all-reduce that the other ranks skipped should time out";
    } catch (const Error& e) {
      const double waited = std::chrono::duration<double>(CommClock::now() - start).count();
      // The stall check names the ranks not heard from at the collective: here all others,
      // silent for the grace period (half the time-out) after it.
      const std::string others =
          ranks == 2 ? "rank 1 did not report reaching it (no word from it"
                     : "ranks 1 and 2 did not report reaching it (no word from them";
      const std::string expected =
          "all-reduce 'late bucket' (4096 bytes) did not complete "
          "within 2 s on rank 0 of " +
          std::to_string(ranks) + ": " + others + " in 1 s more: ";
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("rank 0 was waiting at it (#"), std::string::npos)
          << e.what();
      EXPECT_GE(waited, 2.9);
      EXPECT_LT(waited, 4.5);  // the others join at 5 s
    }
    EXPECT_TRUE(world->failed());
    // Every later task fails at once, with the first error.
    float other = 1;
    auto after = world->allreduceSumAsync(&other, 1, "after the time-out");
    try {
      after->wait();
      FAIL() << "a task after a failed one should fail";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("task 'after the time-out' was not run on rank 0"),
                std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("'late bucket'"), std::string::npos) << e.what();
    }
    // shutdown() gives the abandoned collective this long to be completed by the late ranks.
    world->setTimeoutSeconds(60);
  } else {
    // Skip the collective, then join it late: rank 0 has given up on it by then.
    std::this_thread::sleep_for(std::chrono::seconds(5));
    world->allreduceSumAsync(lateBuffer.data(), lateBuffer.size(), "late bucket")->wait();
    EXPECT_EQ(lateBuffer, std::vector<float>(lateBuffer.size(), triangle(ranks)));
    EXPECT_FALSE(world->failed());
  }
}

// How long the destructor may take to abandon the stuck all-reduce and fail the queued task.
constexpr double kDestructorSeconds = 2.0;

int checkDestructor() {
  MpiOptions options;
  options.timeoutSeconds = 0;  // wait forever: only the destructor can end the wait
  auto comm = std::make_unique<MpiCommunicator>(options);
  const int rank = comm->rank();
  float value = 1;
  WorkHandle stuck, queued;
  if (rank == 0) {
    stuck = comm->allreduceSumAsync(&value, 1, "never joined");
    queued = comm->submit("queued behind it", [](CollectiveOps&) {});
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  } else {
    std::this_thread::sleep_for(std::chrono::seconds(3));  // never joins
  }
  const auto start = CommClock::now();
  comm.reset();  // no shutdown()
  const double seconds = std::chrono::duration<double>(CommClock::now() - start).count();
  if (rank == 0) {
    bool stuckFailed = false, queuedFailed = false;
    try {
      stuck->wait();
    } catch (const Error& e) {
      stuckFailed = std::strstr(e.what(), "was abandoned") != nullptr;
    }
    try {
      queued->wait();
    } catch (const Error& e) {
      queuedFailed = std::strstr(e.what(), "destroyed before this task ran") != nullptr;
    }
    const bool prompt = seconds < kDestructorSeconds;
    std::printf(
        "destructor returned in %.3f s on rank 0 (%s %.0f s); stuck work %s, queued work %s\n",
        seconds, prompt ? "within" : "NOT WITHIN", kDestructorSeconds,
        stuckFailed ? "abandoned" : "NOT ABANDONED", queuedFailed ? "failed" : "NOT FAILED");
    std::fflush(stdout);
    // Without MPI_Finalize (the point of the check), so mpirun reports a failure whatever this
    // exit status: CTest reads the verdict from the line above.
    _exit(prompt && stuckFailed && queuedFailed ? 0 : 1);
  }
  _exit(0);
}

}  // namespace
}  // namespace imerge::distributed

int main(int argc, char** argv) {
  using namespace imerge::distributed;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--check-destructor") == 0) return checkDestructor();
  }
  ::testing::InitGoogleTest(&argc, argv);
  std::unique_ptr<MpiCommunicator> comm =
      imerge::test::startMpiTestWorld("mpi_communicator_mpitest");
  if (!comm) return 1;
  world = comm.get();
  int result = RUN_ALL_TESTS();
  try {
    comm->shutdown();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rank %d: shutdown failed: %s\n", comm->rank(), e.what());
    result = 1;
  }
  // On rank 0 the timed-out all-reduce completed while shutdown waited for it.
  if (comm->rank() == 0 && !lateBuffer.empty() &&
      lateBuffer != std::vector<float>(lateBuffer.size(), triangle(comm->size()))) {
    std::fprintf(stderr, "rank 0: the abandoned all-reduce did not complete with the late ranks\n");
    result = 1;
  }
  return result;
}
