// Work's semantics and the world-of-one communicator, in one process (no MPI): waiting,
// rethrowing a task's exception, timing marks, FIFO order, identity collectives and abort's exit
// code. The MPI backend's own tests run under mpirun (mpi_communicator_mpitest.cpp); its queue
// and failure rules are also checked here in a world of one (MPI's singleton start, no mpirun),
// each in a child process, since MPI starts only once per process.
#include "distributed/comm/communicator.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/error.h"
#include "distributed/comm/mpi_communicator.h"

namespace imerge::distributed {
namespace {

TEST(Work, WaitBlocksUntilFinishedFromAnotherThread) {
  auto work = std::make_shared<Work>("bucket 0");
  EXPECT_EQ(work->label(), "bucket 0");
  EXPECT_FALSE(work->completed());
  std::atomic<bool> waited{false};
  std::thread waiter([&] {
    work->wait();
    waited = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(waited.load());  // nothing has finished it yet
  work->markStarted();
  work->markFinished(nullptr);
  waiter.join();
  EXPECT_TRUE(waited.load());
  EXPECT_TRUE(work->completed());
}

TEST(Work, TimesAreOrderedAndSetByTheMarks) {
  Work work("timed");
  EXPECT_EQ(work.started(), CommClock::time_point{});
  const auto before = CommClock::now();
  work.markStarted();
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  work.markFinished(nullptr);
  EXPECT_GE(work.started(), before);
  EXPECT_GE(work.finished() - work.started(), std::chrono::milliseconds(2));
}

TEST(Work, FinishedWithoutStartGetsAStartTime) {
  Work work("never ran");
  work.markFinished(std::make_exception_ptr(Error("refused")));
  EXPECT_EQ(work.started(), work.finished());
  EXPECT_TRUE(work.completed());
}

TEST(Work, WaitRethrowsTheErrorEveryTime) {
  Work work("failing");
  work.markStarted();
  work.markFinished(std::make_exception_ptr(Error("all-reduce 'failing' broke")));
  for (int attempt = 0; attempt < 2; ++attempt) {
    try {
      work.wait();
      FAIL() << "wait() should rethrow";
    } catch (const Error& e) {
      EXPECT_STREQ(e.what(), "all-reduce 'failing' broke");
    }
  }
}

TEST(SingleProcessCommunicator, IsAWorldOfOne) {
  SingleProcessCommunicator comm;
  EXPECT_EQ(comm.rank(), 0);
  EXPECT_EQ(comm.size(), 1);
  EXPECT_EQ(comm.backendName(), "single");
}

TEST(SingleProcessCommunicator, CollectivesAreIdentities) {
  SingleProcessCommunicator comm;
  std::vector<float> gradients{1.5f, -2.0f, 3.25f};
  auto work = comm.allreduceSumAsync(gradients.data(), gradients.size(), "bucket 0");
  EXPECT_TRUE(work->completed());  // inline
  work->wait();
  EXPECT_EQ(work->label(), "bucket 0");
  EXPECT_EQ(gradients, (std::vector<float>{1.5f, -2.0f, 3.25f}));

  std::vector<int64_t> counts{4, -7};
  comm.allreduceMax(counts.data(), counts.size());
  EXPECT_EQ(counts, (std::vector<int64_t>{4, -7}));

  uint64_t planHash = 0x1234abcdULL;
  comm.broadcast(&planHash, sizeof planHash, 0);
  EXPECT_EQ(planHash, 0x1234abcdULL);
  comm.barrier();

  std::vector<uint8_t> flags{0xff, 0x0f};
  comm.submit("flags",
              [&](CollectiveOps& ops) { ops.allreduceBitwiseAnd(flags.data(), flags.size()); })
      ->wait();
  EXPECT_EQ(flags, (std::vector<uint8_t>{0xff, 0x0f}));
}

TEST(SingleProcessCommunicator, ThrowingTaskFailsItsWorkOnly) {
  SingleProcessCommunicator comm;
  auto failing = comm.submit("bad", [](CollectiveOps&) { IMERGE_FAIL("task 'bad' failed"); });
  EXPECT_TRUE(failing->completed());
  EXPECT_THROW(failing->wait(), Error);
  try {
    failing->wait();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("task 'bad' failed"), std::string::npos) << e.what();
  }
  // Non-imerge exceptions travel unchanged.
  auto other = comm.submit("std", [](CollectiveOps&) { throw std::out_of_range("index"); });
  EXPECT_THROW(other->wait(), std::out_of_range);
  // One rank cannot disagree with itself about the order, so later tasks still run.
  bool ran = false;
  comm.submit("after", [&](CollectiveOps&) { ran = true; })->wait();
  EXPECT_TRUE(ran);
}

TEST(SingleProcessCommunicator, TasksRunInSubmissionOrder) {
  SingleProcessCommunicator comm;
  std::vector<int> order;
  std::vector<WorkHandle> works;
  for (int i = 0; i < 50; ++i) {
    works.push_back(comm.submit("task " + std::to_string(i),
                                [&order, i](CollectiveOps&) { order.push_back(i); }));
  }
  for (auto& work : works) work->wait();
  std::vector<int> expected(50);
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(order, expected);
  for (size_t i = 1; i < works.size(); ++i) {
    EXPECT_GE(works[i]->started(), works[i - 1]->finished());
  }
}

TEST(SingleProcessCommunicatorDeathTest, AbortExitsWithTheCode) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  SingleProcessCommunicator comm;
  EXPECT_EXIT(comm.abort(7), ::testing::ExitedWithCode(7), "");
}

// ---- MpiCommunicator in a world of one, each test body in a child process -----------------

// Open MPI's own allocations look like leaks to LeakSanitizer (tests/distributed/CMakeLists.txt
// leaves the mpirun tests out of sanitizer runs for the same reason).
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

// Runs `body` in a child that exits 0 when every check in it held; the child's failures are
// printed to its stderr, which the death test shows.
template <typename Body>
void inMpiChild(Body body) {
  if (kSanitized) GTEST_SKIP() << "Open MPI under LeakSanitizer";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        const bool ok = body();
        std::fflush(nullptr);
        std::_Exit(ok ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

#define CHILD_CHECK(cond)                                                           \
  do {                                                                              \
    if (!(cond)) {                                                                  \
      std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      return false;                                                                 \
    }                                                                               \
  } while (0)

std::string errorOf(const WorkHandle& work) {
  try {
    work->wait();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(MpiCommunicatorWorldOfOne, RunsTasksInSubmissionOrderAndFinalizes) {
  inMpiChild([] {
    MpiCommunicator comm;
    CHILD_CHECK(comm.rank() == 0 && comm.size() == 1 && comm.backendName() == "mpi");
    std::vector<int> order;
    std::vector<float> values(1000, 2.5f);
    std::vector<WorkHandle> works;
    for (int i = 0; i < 200; ++i) {
      works.push_back(comm.submit("task " + std::to_string(i), [&order, i](CollectiveOps& ops) {
        order.push_back(i);
        int64_t value = i;
        ops.allreduceMax(&value, 1);
        ops.barrier();
      }));
      works.push_back(comm.allreduceSumAsync(values.data(), values.size(), "sum"));
    }
    for (auto& work : works) work->wait();
    std::vector<int> expected(200);
    std::iota(expected.begin(), expected.end(), 0);
    CHILD_CHECK(order == expected);
    CHILD_CHECK(values == std::vector<float>(1000, 2.5f));
    for (size_t i = 1; i < works.size(); ++i) {
      CHILD_CHECK(works[i]->started() >= works[i - 1]->finished());
    }
    comm.shutdown();
    comm.shutdown();  // idempotent
    CHILD_CHECK(errorOf(comm.submit("late", [](CollectiveOps&) {})).find("after shutdown()") !=
                std::string::npos);
    return true;
  });
}

TEST(MpiCommunicatorWorldOfOne, ATaskThatThrowsFailsEveryLaterTask) {
  inMpiChild([] {
    MpiCommunicator comm;
    auto bad = comm.submit("bad plan", [](CollectiveOps&) { IMERGE_FAIL("plan mismatch"); });
    float value = 1;
    auto after = comm.allreduceSumAsync(&value, 1, "bucket 0");
    CHILD_CHECK(errorOf(bad).find("plan mismatch") != std::string::npos);
    const std::string second = errorOf(after);
    CHILD_CHECK(second.find("task 'bucket 0' was not run on rank 0") != std::string::npos);
    CHILD_CHECK(second.find("plan mismatch") != std::string::npos);
    CHILD_CHECK(comm.failed());
    comm.shutdown();  // a failed communicator still finalises when nothing is outstanding
    return true;
  });
}

TEST(MpiCommunicatorWorldOfOne, OnlyOnePerProcess) {
  inMpiChild([] {
    MpiCommunicator comm;
    bool refused = false;
    try {
      MpiCommunicator second;
    } catch (const Error& e) {
      refused = std::string(e.what()).find("only once per process") != std::string::npos;
    }
    CHILD_CHECK(refused);
    comm.shutdown();
    return true;
  });
}

TEST(MpiCommunicatorWorldOfOne, DestructorWithoutShutdownFailsQueuedTasks) {
  inMpiChild([] {
    WorkHandle running, queued;
    std::atomic<bool> started{false}, release{false};
    {
      MpiCommunicator comm;
      running = comm.submit("slow", [&](CollectiveOps&) {
        started = true;
        while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      });
      queued = comm.submit("queued", [](CollectiveOps&) {});
      // The destructor must find "slow" running, not still queued.
      while (!started) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      std::thread releaser([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        release = true;
      });
      releaser.detach();
    }  // no shutdown(): the running task ends, the queued one is failed, nothing finalises
    CHILD_CHECK(errorOf(running).empty());
    CHILD_CHECK(errorOf(queued).find("destroyed before this task ran") != std::string::npos);
    return true;
  });
}

TEST(MpiLaunchHelpers, ReadMpirunsEnvironment) {
  // A plain test run is not under mpirun (the MPI tests run the mpitest programs instead).
  if (launchedByMpirun()) GTEST_SKIP() << "running under mpirun";
  EXPECT_EQ(localRankCount(), 1);
  EXPECT_EQ(localRank(), 0);
}

}  // namespace
}  // namespace imerge::distributed
