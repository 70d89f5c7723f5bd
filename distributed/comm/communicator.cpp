// Work's hand-off between the communication thread and its waiters, the blocking conveniences
// every backend shares, and the world of one.
//
// Contract: a Work is finished exactly once (markFinished), by the thread that ran its task;
// wait() may be called any number of times from any thread and rethrows the task's exception
// each time. SingleProcessCommunicator runs tasks inline on the caller's thread, so its works
// are complete when submit() returns.
#include "distributed/comm/communicator.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace imerge::distributed {

// ---- Work ----------------------------------------------------------------------------------

void Work::wait() {
  std::unique_lock lock(mutex_);
  done_.wait(lock, [this] { return completed_; });
  if (error_) std::rethrow_exception(error_);
}

bool Work::completed() const {
  std::lock_guard lock(mutex_);
  return completed_;
}

CommClock::time_point Work::started() const {
  std::lock_guard lock(mutex_);
  return started_;
}

CommClock::time_point Work::finished() const {
  std::lock_guard lock(mutex_);
  return finished_;
}

void Work::markStarted() {
  std::lock_guard lock(mutex_);
  started_ = CommClock::now();
}

void Work::markFinished(std::exception_ptr error) {
  {
    std::lock_guard lock(mutex_);
    finished_ = CommClock::now();
    // A task that failed before it started (a communicator already failed or shut down) still
    // gets a start time, so traces never show a finish before a start.
    if (started_ == CommClock::time_point{}) started_ = finished_;
    error_ = std::move(error);
    completed_ = true;
  }
  // Outside the lock: a woken waiter must not block on the mutex we still hold.
  done_.notify_all();
}

std::string exceptionMessage(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "an exception that is not a std::exception";
  }
}

// ---- Communicator conveniences -------------------------------------------------------------

WorkHandle Communicator::allreduceSumAsync(float* data, size_t count, std::string label) {
  return submit(std::move(label),
                [data, count](CollectiveOps& ops) { ops.allreduceSum(data, count); });
}

void Communicator::broadcast(void* data, size_t bytes, int root) {
  submit("broadcast", [data, bytes, root](CollectiveOps& ops) {
    ops.broadcast(data, bytes, root);
  })->wait();
}

namespace {
// One blocking all-reduce of the main thread: `reduce(ops, data, count)` on the communication
// thread, waited for.
template <typename T, typename Reduce>
void allreduceAndWait(Communicator& communicator, const char* label, T* data, size_t count,
                      Reduce reduce) {
  communicator
      .submit(label, [data, count, reduce](CollectiveOps& ops) { reduce(ops, data, count); })
      ->wait();
}
}  // namespace

void Communicator::allreduceSum(double* data, size_t count) {
  allreduceAndWait(*this, "all-reduce sum", data, count,
                   [](CollectiveOps& ops, double* d, size_t n) { ops.allreduceSum(d, n); });
}

void Communicator::allreduceSum(int64_t* data, size_t count) {
  allreduceAndWait(*this, "all-reduce sum", data, count,
                   [](CollectiveOps& ops, int64_t* d, size_t n) { ops.allreduceSum(d, n); });
}

void Communicator::allreduceAverage(double* data, size_t count) {
  allreduceSum(data, count);
  for (size_t i = 0; i < count; ++i) data[i] /= static_cast<double>(size());
}

void Communicator::allreduceMax(double* data, size_t count) {
  allreduceAndWait(*this, "all-reduce max", data, count,
                   [](CollectiveOps& ops, double* d, size_t n) { ops.allreduceMax(d, n); });
}

void Communicator::allreduceMax(int64_t* data, size_t count) {
  allreduceAndWait(*this, "all-reduce max", data, count,
                   [](CollectiveOps& ops, int64_t* d, size_t n) { ops.allreduceMax(d, n); });
}

void Communicator::barrier() {
  submit("barrier", [](CollectiveOps& ops) { ops.barrier(); })->wait();
}

std::vector<std::string> Communicator::allgatherText(const std::string& mine) {
  std::vector<std::string> texts(static_cast<size_t>(size()));
  submit("all-gather text", [&](CollectiveOps& ops) {
    const int64_t length = static_cast<int64_t>(mine.size());
    std::vector<int64_t> lengths(texts.size());
    ops.allgather(&length, lengths.data(), sizeof length);
    for (int root = 0; root < size(); ++root) {
      std::string& text = texts[static_cast<size_t>(root)];
      text = root == rank() ? mine : std::string(static_cast<size_t>(lengths[root]), '\0');
      ops.broadcast(text.data(), text.size(), root);
    }
  })->wait();
  return texts;
}

BlockRange blockOf(size_t count, int rank, int workers) {
  IMERGE_CHECK(workers >= 1 && rank >= 0 && rank < workers, "blockOf: rank ", rank,
               " is not one of ", workers, " workers");
  const size_t ranks = static_cast<size_t>(workers), r = static_cast<size_t>(rank);
  const size_t base = count / ranks, longer = count % ranks;
  return {r * base + std::min(r, longer), base + (r < longer ? 1 : 0)};
}

const char* collectiveKindName(CollectiveKind kind) {
  static constexpr const char* kNames[] = {"all-reduce", "reduce-scatter", "all-gather"};
  return kNames[static_cast<int>(kind)];
}

void runCollective(CollectiveOps& ops, CollectiveKind kind, float* data, size_t count) {
  switch (kind) {
    case CollectiveKind::AllReduce:
      ops.allreduceSum(data, count);
      break;
    case CollectiveKind::ReduceScatter:
      ops.reduceScatterSum(data, count);
      break;
    case CollectiveKind::AllGather:
      ops.allgatherBlocks(data, count);
      break;
  }
}

void averageCollective(CollectiveOps& ops, CollectiveKind kind, float* data, size_t count, int rank,
                       int workers) {
  if (workers == 1) return;
  runCollective(ops, kind, data, count);
  if (kind == CollectiveKind::AllGather) return;
  const BlockRange sums =
      kind == CollectiveKind::AllReduce ? BlockRange{0, count} : blockOf(count, rank, workers);
  const float scale = 1.0f / static_cast<float>(workers);
  float* first = data + sums.offset;
#pragma omp simd
  for (size_t i = 0; i < sums.count; ++i) first[i] *= scale;
}

// ---- SingleProcessCommunicator -------------------------------------------------------------

namespace {

// With one rank every reduction of a buffer is the buffer itself, and rank 0 is every root.
class IdentityOps final : public CollectiveOps {
 public:
  void allreduceSum(float*, size_t) override {}
  void allreduceSum(double*, size_t) override {}
  void allreduceSum(int64_t*, size_t) override {}
  void allreduceMax(double*, size_t) override {}
  void allreduceMax(int64_t*, size_t) override {}
  void allreduceBitwiseAnd(uint8_t*, size_t) override {}
  void broadcast(void*, size_t, int) override {}
  void allgather(const void* mine, void* all, size_t bytes) override {
    std::memcpy(all, mine, bytes);
  }
  void reduceScatterSum(float*, size_t) override {}
  void allgatherBlocks(float*, size_t) override {}
  void barrier() override {}
};

}  // namespace

WorkHandle SingleProcessCommunicator::submit(std::string label, CommTask task) {
  auto work = std::make_shared<Work>(std::move(label));
  IdentityOps ops;
  work->markStarted();
  // A throwing task does not poison later ones here (unlike MPI): with one rank there is no
  // collective order that another rank could disagree with.
  try {
    task(ops);
    work->markFinished(nullptr);
  } catch (...) {
    work->markFinished(std::current_exception());
  }
  return work;
}

void SingleProcessCommunicator::abort(int exitCode) {
  // The same promise as MPI_Abort: the process ends now, from any thread, without running
  // destructors or atexit handlers (which could wait on the very thread that is failing).
  // Flush first, so the error that led here is not lost in a stdio buffer.
  std::fflush(nullptr);
  std::_Exit(exitCode);
}

}  // namespace imerge::distributed
