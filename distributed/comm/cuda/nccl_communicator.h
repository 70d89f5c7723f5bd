// The NCCL communicator: all-reduces of DEVICE buffers among the ranks, one GPU per rank
// (CUDA builds only; code built without CUDA reaches it through makeNcclCommunicator in
// device_communicator.h).
//
// Streams: NCCL runs on the communicator's own non-blocking stream. Each device all-reduce makes
// that stream wait for a `ready` event of the compute stream (the caller's, recorded when the
// bucket's gradients were final; allreduceSumAsync records one itself on computeStream()), so
// the all-reduce sees the finished gradients, enqueues ncclAllReduce and records a completion
// event; the host never blocks. waitOnStream() makes a compute stream wait for that completion
// event, again without blocking the host: the optimizer and the next forward pass simply queue
// behind the all-reduce. collectiveAsync averages inside NCCL (ncclAvg, NCCL >= 2.10), so
// no separate scaling kernel runs.
//
// A split bucket's halves: blockOf's blocks are equal when the ranks divide the count, and then
// they are one ncclReduceScatter or ncclAllGather, in place. Otherwise the first blocks are one
// element longer, which NCCL's reduce-scatter and all-gather (equal blocks only) cannot express:
// the halves are then one NCCL group of a rooted collective per block, ncclReduce to the block's
// rank or ncclBroadcast from it (what PyTorch does for all-gathers of unequal sizes).
//
// Completion on the host: one small poller thread queries the completion events in order (one
// stream, so they complete in order) and finishes the Works, so Work::wait()/completed() behave
// as for MPI. It sleeps between queries (20 us growing to 1 ms) instead of cudaEventSynchronize,
// so it can also enforce the time-out and notice NCCL's asynchronous errors
// (ncclCommGetAsyncError): a rank that died makes the Works fail with an imerge::Error, not hang.
//
// Ordering: every device all-reduce is enqueued in call order on one stream, so the ranks'
// orders agree when their calls do. Host tasks (submit, broadcast, barrier) go to the bootstrap
// MPI communicator and are ordered among themselves, not with the device all-reduces.
//
// Errors: every CUDA or NCCL failure throws imerge::Error naming the call and its error string.
// After a failure (or a time-out) the communicator is failed: later all-reduces fail at once and
// shutdown() aborts the NCCL communicator (ncclCommAbort) instead of destroying it gracefully.
#pragma once

#include <cuda_runtime_api.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "distributed/comm/device_communicator.h"

struct ncclComm;  // nccl.h's ncclComm_t is `struct ncclComm*`; nccl.h stays out of this header

namespace imerge::distributed {

struct NcclOptions {
  // The CUDA device of this rank; -1 picks localRank() modulo the number of GPUs.
  int device = -1;
  // A device all-reduce not complete after this long fails its Work; 0 waits forever.
  double timeoutSeconds = 60.0;
};

class NcclCommunicator final : public DeviceCommunicator {
 public:
  // Collective over `host`: rank 0 creates the NCCL unique id and broadcasts it through `host`,
  // then every rank joins with ncclCommInitRank. `host` must outlive this communicator (it runs
  // the host tasks) and must have the same ranks. `computeStream` is the stream that produces
  // the gradients (nullptr: the legacy default stream); see setComputeStream.
  NcclCommunicator(Communicator& host, cudaStream_t computeStream = nullptr,
                   const NcclOptions& options = {});
  // Stops the poller; releases the NCCL communicator with ncclCommAbort when shutdown() was not
  // called (it never waits for other ranks).
  ~NcclCommunicator() override;
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string backendName() const override { return "nccl"; }
  int device() const { return device_; }
  Device& bufferDevice() const override;

  // Host tasks run on the bootstrap communicator's thread (their CollectiveOps are MPI's).
  WorkHandle submit(std::string label, CommTask task) override;

  // `data` is a device pointer of `count` floats on device(). The all-reduce starts when the
  // work queued so far on the compute stream is done; the buffer must not be written (by any
  // stream) until the all-reduce completed, e.g. after waitOnStream on the writing stream.
  WorkHandle allreduceSumAsync(float* data, size_t count, std::string label) override;
  // The DeviceCommunicator contract: ncclAvg after sync.ready, marks around it.
  WorkHandle collectiveAsync(CollectiveKind kind, float* data, size_t count, const DeviceSync& sync,
                             std::string label) override;

  // The stream whose work every later all-reduce waits for (the one backward runs on).
  void setComputeStream(cudaStream_t stream);
  cudaStream_t computeStream() const;
  cudaStream_t commStream() const { return commStream_; }

  // Makes `stream` wait, on the device, until `work`'s all-reduce has completed; returns at
  // once. A work that is already complete (or not a device all-reduce of this communicator)
  // needs no wait and is ignored.
  void waitOnStream(const WorkHandle& work, cudaStream_t stream) override;

  // Device collectives of a buffer of its own, timed by events around each on the
  // communication stream (the collectives' own time, not the poller's wake-ups).
  AllreduceTimer collectiveTimer(size_t maxBytes, CollectiveKind kind) override;

  [[noreturn]] void abort(int exitCode) override;
  // Waits for every outstanding all-reduce, then destroys the NCCL communicator and the
  // stream. Does not shut the host communicator down (its owner does). Idempotent.
  void shutdown() override;

 private:
  struct InFlight {
    WorkHandle work;
    cudaEvent_t done;
    size_t bytes;
    CommClock::time_point enqueuedAt;
  };

  // Queues one collective of `kind` with `op` (an ncclRedOp_t; unused by AllGather) after
  // `ready` (null: an event recorded now on the compute stream), with the optional timing marks
  // around it.
  WorkHandle enqueue(CollectiveKind kind, float* data, size_t count, int op, cudaEvent_t ready,
                     cudaEvent_t started, cudaEvent_t finished, std::string label);
  // The NCCL calls of one collective on the communication stream (caller holds mutex_).
  void issue(CollectiveKind kind, float* data, size_t count, int op, const std::string& where);
  void pollerMain();
  cudaEvent_t takeEvent();  // from the pool (caller holds mutex_)

  Communicator& host_;
  NcclOptions options_;
  int rank_ = 0;
  int size_ = 1;
  int device_ = 0;
  ncclComm* comm_ = nullptr;
  cudaStream_t commStream_ = nullptr;
  cudaStream_t computeStream_ = nullptr;
  cudaEvent_t computeReady_ = nullptr;  // recorded on the compute stream before each all-reduce

  mutable std::mutex mutex_;  // guards everything below, and orders NCCL calls from threads
  std::condition_variable wake_;
  std::deque<InFlight> inFlight_;
  std::vector<cudaEvent_t> freeEvents_;
  std::exception_ptr firstError_;
  bool stopping_ = false;
  bool shutDown_ = false;
  std::thread poller_;
};

}  // namespace imerge::distributed
