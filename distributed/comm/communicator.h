// Communicators: collectives among the ranks of a data-parallel job.
//
// Every collective runs on one communication thread that owns all MPI calls, in the order the
// tasks were submitted, so backward never waits on the network and every rank issues its
// collectives in the same order. A task is a function that runs on that thread and may call the
// blocking CollectiveOps any number of times (the priority scheduler negotiates and sends inside
// one task); allreduceSumAsync is the common one-collective task.
//
// Backends: MPI for host buffers (mpi_communicator.h), NCCL for device buffers
// (nccl_communicator.h, CUDA builds), and a world of one (this file) that runs tasks inline and
// whose collectives are identities.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "core/error.h"

namespace imerge::distributed {

using CommClock = std::chrono::steady_clock;

// A submitted task. wait() blocks until it has run and rethrows what it threw.
class Work {
 public:
  explicit Work(std::string label) : label_(std::move(label)) {}
  void wait();
  bool completed() const;
  const std::string& label() const { return label_; }
  // When the communication thread started and finished it (for traces and breakdowns).
  CommClock::time_point started() const;
  CommClock::time_point finished() const;

  // Called by the communicator's thread.
  void markStarted();
  void markFinished(std::exception_ptr error);

 private:
  std::string label_;
  mutable std::mutex mutex_;
  std::condition_variable done_;
  bool completed_ = false;
  std::exception_ptr error_;
  CommClock::time_point started_{}, finished_{};
};
using WorkHandle = std::shared_ptr<Work>;

// The blocking collectives; only the communication thread calls them (inside a task). Each
// throws imerge::Error, naming the operation and the rank, when it cannot complete (including a
// time-out: a rank that died or stopped must never hang the others).
class CollectiveOps {
 public:
  virtual ~CollectiveOps() = default;
  // Sum and maximum of float32, float64 and int64 buffers: float32 for gradients, float64 and
  // int64 for figures a training loop adds up over ranks (losses, counts, times).
  virtual void allreduceSum(float* data, size_t count) = 0;
  virtual void allreduceSum(double* data, size_t count) = 0;
  virtual void allreduceSum(int64_t* data, size_t count) = 0;
  virtual void allreduceMax(double* data, size_t count) = 0;
  virtual void allreduceMax(int64_t* data, size_t count) = 0;
  virtual void allreduceBitwiseAnd(uint8_t* data, size_t bytes) = 0;
  virtual void broadcast(void* data, size_t bytes, int root) = 0;
  // Every rank's `bytes` at `mine`, in rank order, into `all` (size() * bytes).
  virtual void allgather(const void* mine, void* all, size_t bytes) = 0;
  // The two halves of an all-reduce, for `imerge-overlap`'s split buckets (DeAR), in place on
  // `count` floats cut into one block per rank (blockOf). reduceScatterSum leaves in this rank's
  // block the sum over ranks of that block, and the rest of `data` unspecified;
  // allgatherBlocks copies every rank's block into the others' buffers.
  virtual void reduceScatterSum(float* data, size_t count) = 0;
  virtual void allgatherBlocks(float* data, size_t count) = 0;
  virtual void barrier() = 0;
};

using CommTask = std::function<void(CollectiveOps&)>;

// The block of a `count`-element buffer that `rank` of `workers` owns in reduceScatterSum and
// allgatherBlocks: consecutive blocks in rank order, the first count % workers of them one
// element longer than the rest (a block may be empty when count < workers).
struct BlockRange {
  size_t offset = 0;
  size_t count = 0;
};
BlockRange blockOf(size_t count, int rank, int workers);

// Which collective moves a bucket's gradients: the whole all-reduce, or one half of it
// (imerge-overlap's split buckets). Named in timers, intervals and device collectives alike.
enum class CollectiveKind { AllReduce, ReduceScatter, AllGather };
// "all-reduce", "reduce-scatter", "all-gather".
const char* collectiveKindName(CollectiveKind kind);

// `kind` on `count` floats at `data` through `ops`, in place: allreduceSum, reduceScatterSum or
// allgatherBlocks.
void runCollective(CollectiveOps& ops, CollectiveKind kind, float* data, size_t count);
// runCollective among `workers` ranks (this one `rank`), then what it left as this rank's sums
// divided by `workers`: every element of an all-reduce, this rank's block of a reduce-scatter,
// nothing of an all-gather (it moves averages already). The one place gradients in host memory
// become averages, while they are still hot in cache. A world of one runs nothing: the sum over
// one rank is the buffer itself.
void averageCollective(CollectiveOps& ops, CollectiveKind kind, float* data, size_t count, int rank,
                       int workers);

// Thrown by every rank at the same point, once the ranks found together that the run cannot go
// on (they read different datasets, say): no rank is left waiting in a collective, so each may
// shut down in order and exit, instead of aborting the job.
class RanksDisagree : public Error {
 public:
  using Error::Error;
};

// The text of a stored exception, for errors that quote an earlier one.
std::string exceptionMessage(const std::exception_ptr& error);

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::string backendName() const = 0;  // "mpi", "nccl", "single"

  // Queues `task` behind every earlier one and returns at once.
  virtual WorkHandle submit(std::string label, CommTask task) = 0;

  // Sums `count` floats in place across ranks; the buffer must stay untouched until the work
  // has completed.
  virtual WorkHandle allreduceSumAsync(float* data, size_t count, std::string label);

  // Blocking conveniences for the main thread (start-up checks, plan agreement).
  void broadcast(void* data, size_t bytes, int root);
  void allreduceSum(double* data, size_t count);
  void allreduceSum(int64_t* data, size_t count);
  // The sum divided by size(): the mean over ranks, the same on every rank.
  void allreduceAverage(double* data, size_t count);
  void allreduceMax(double* data, size_t count);
  void allreduceMax(int64_t* data, size_t count);
  void barrier();
  // Every rank's `mine`, indexed by rank, on every rank (an all-gather of the lengths, then one
  // broadcast of the bytes per rank: for start-up checks, not for the training loop).
  std::vector<std::string> allgatherText(const std::string& mine);
  // Every rank's `mine` (a trivially copyable value), indexed by rank, on every rank.
  template <typename T>
  std::vector<T> allgather(const T& mine) {
    static_assert(std::is_trivially_copyable_v<T>, "allgather sends T as plain bytes");
    std::vector<T> all(static_cast<size_t>(size()));
    submit("all-gather", [&](CollectiveOps& ops) {
      ops.allgather(&mine, all.data(), sizeof(T));
    })->wait();
    return all;
  }

  // Ends the job on every rank at once (MPI_Abort); for fatal errors, from any thread.
  [[noreturn]] virtual void abort(int exitCode) = 0;
  // Finishes the queued work and shuts the backend down (MPI_Finalize). Explicit, never in a
  // destructor: a rank that is failing must not block in a collective while it unwinds.
  virtual void shutdown() = 0;
};

// A world of one: tasks run inline on the caller's thread, collectives leave data as it is.
class SingleProcessCommunicator final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string backendName() const override { return "single"; }
  WorkHandle submit(std::string label, CommTask task) override;
  [[noreturn]] void abort(int exitCode) override;
  void shutdown() override {}
};

}  // namespace imerge::distributed
