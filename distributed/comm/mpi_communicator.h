// The MPI communicator: collectives over host buffers among the ranks that mpirun started.
//
// One communication thread owns every MPI call of the process, from MPI_Init_thread to
// MPI_Finalize; the only exception is abort(), which calls MPI_Abort from the caller's thread
// (see abort()). Tasks run on that thread one at a time, in submission order (FIFO), so every
// rank issues its collectives in the same order as long as every rank submits them in the same
// order.
//
// Waiting: each collective is a non-blocking MPI call (MPI_Iallreduce, MPI_Ireduce_scatter, ...
// MPI_Ibarrier) completed by an MPI_Test loop that pauses between tests (pauseBetweenTests,
// thread_latency.h: a yield while a core is free, a short sleep while every core computes). On a
// 2-core machine the compute thread of the same rank needs that core; a blocking MPI_Allreduce
// would spin on it. The loop also enforces the time-out: a collective that another rank never joins
// fails with an imerge::Error instead of hanging the job.
//
// Failure: after a task fails (a time-out, an MPI error, or a task that threw), every later task
// fails at once with the first error, because the ranks may no longer agree on the order of
// collectives. The usual reaction is to print the error and call abort(). A collective that
// timed out cannot be cancelled (MPI has no cancel for collectives): its buffer stays MPI's, and
// the thread keeps testing it, so it completes if the other ranks join late; keep the buffer
// alive until abort() or shutdown().
//
// Open MPI settings made before MPI_Init unless the user set them (mpi_communicator.cpp says
// why): mpi_yield_when_idle=0, and coll_libnbc_iallreduce_algorithm=3 (Rabenseifner), without
// which MPI_Iallreduce reached only about 40% of MPI_Allreduce's bandwidth on 2 ranks.
//
// Life cycle: the constructor starts the thread and waits for MPI_Init_thread, so rank() and
// size() are valid at once. shutdown() runs the queued work and calls MPI_Finalize. The
// destructor never finalizes: it stops the thread (abandoning a collective that is waiting) so a
// failing rank can unwind without blocking in MPI. MPI can be initialised once per process, so
// there is at most one MpiCommunicator per process, ever.
#pragma once

#include <atomic>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "distributed/comm/communicator.h"
#include "distributed/comm/launch_environment.h"

namespace imerge::distributed {

struct MpiOptions {
  // A collective not complete after this long fails with an imerge::Error; 0 waits forever.
  double timeoutSeconds = 60.0;
  // Elements per MPI call: MPI counts are `int`, so larger buffers are split into pieces of at
  // most this many elements (tests lower it to exercise the split on small buffers).
  size_t maxElementsPerCall = 2147483647;
  // Before each collective, every rank's operation, element count, element size and root are
  // compared (one all-gather of a small fixed record), so ranks that post different collectives
  // fail together with an error naming each rank's collective, before MPI would match them
  // (undefined behaviour: Open MPI reports MPI_ERR_TRUNCATE, then corrupts memory). Costs one
  // small-message latency per collective (bench/collective_check_cost.sh measures it in a step).
  bool checkCollectiveShapes = true;
};

class MpiCommunicator final : public Communicator {
 public:
  // Starts the communication thread and initialises MPI on it. Throws imerge::Error when MPI is
  // already initialised or finalised in this process, or when the MPI library cannot give the
  // thread support this design needs.
  explicit MpiCommunicator(const MpiOptions& options = {});
  // Stops the thread without MPI_Finalize (see the file comment); never blocks on another rank.
  ~MpiCommunicator() override;
  MpiCommunicator(const MpiCommunicator&) = delete;
  MpiCommunicator& operator=(const MpiCommunicator&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string backendName() const override { return "mpi"; }

  WorkHandle submit(std::string label, CommTask task) override;

  // MPI_Abort(MPI_COMM_WORLD, exitCode): ends every rank of the job. Callable from any thread,
  // also while the communication thread is inside an MPI call; this is the one MPI call made off
  // that thread, which the standard leaves to the implementation at MPI_THREAD_FUNNELED and
  // Open MPI supports (it kills the job through its runtime, it does not touch communicators).
  // Before MPI_Init or after MPI_Finalize it exits this process with exitCode.
  [[noreturn]] void abort(int exitCode) override;

  // Waits for every queued task, then MPI_Finalize on the communication thread, and joins it.
  // Collectives abandoned by a time-out get up to timeoutSeconds to complete first (the other
  // ranks may join late); if they still have not, MPI_Finalize is skipped (it would wait for
  // them forever) and shutdown throws imerge::Error telling the caller to abort().
  // Idempotent; submit() after it fails.
  void shutdown() override;

  // Tunables read at the start of each collective (tests shorten them).
  void setTimeoutSeconds(double seconds);
  void setMaxElementsPerCall(size_t elements);
  void setCheckCollectiveShapes(bool check);

  // True once a task has failed; later tasks fail with that first error.
  bool failed() const;

 private:
  struct Pending {
    WorkHandle work;
    CommTask task;  // empty: the shutdown marker
  };
  class Ops;

  void threadMain();
  void runTask(Pending& pending, Ops& ops);
  void finishWithoutRunning(Pending& pending, std::exception_ptr error);

  int rank_ = 0;
  int size_ = 1;

  std::atomic<double> timeoutSeconds_;
  std::atomic<size_t> maxElementsPerCall_;
  std::atomic<bool> checkCollectiveShapes_;
  // Set by the destructor: a collective in its test loop gives up at once.
  std::atomic<bool> stopping_{false};

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Pending> queue_;
  bool acceptingTasks_ = true;
  std::exception_ptr firstError_;

  // Start-up hand-shake: the constructor waits until MPI_Init_thread has returned on the thread.
  bool initDone_ = false;
  std::string initError_;

  std::thread thread_;
  bool joined_ = false;
};

// Starts the MPI communicator (a convenience for code that holds a Communicator). Apps that also
// run without mpirun check launchedByMpirun() first and use SingleProcessCommunicator otherwise.
std::unique_ptr<Communicator> startMpiCommunicator(const MpiOptions& options = {});

}  // namespace imerge::distributed
