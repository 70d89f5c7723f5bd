// The NCCL communicator's bootstrap, its enqueueing of device collectives, the poller that turns
// completion events into finished Works, and the device collective timer (the design is in the
// header).
//
// Locking: mutex_ serialises every NCCL call on comm_ (a Reducer may launch from backward's
// thread while shutdown runs on the main one) and guards the in-flight list. The poller never
// holds it while it sleeps or queries an event, so launching is never held up by polling.
#include "distributed/comm/cuda/nccl_communicator.h"

#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "core/cuda/cuda_device.h"
#include "core/error.h"
#include "core/tensor.h"
#include "distributed/comm/mpi_communicator.h"
#include "distributed/comm/stall_report.h"

// ncclAvg (the average inside the all-reduce) appeared in NCCL 2.10.
static_assert(NCCL_VERSION_CODE >= NCCL_VERSION(2, 10, 0),
              "imerge's NCCL backend needs NCCL 2.10 or later (ncclAvg)");

namespace imerge::distributed {

namespace {

void checkCuda(cudaError_t code, const char* call, const std::string& context) {
  if (code == cudaSuccess) return;
  IMERGE_FAIL(call, " failed", context, ": ", cudaGetErrorName(code), ": ",
              cudaGetErrorString(code));
}

void checkNccl(ncclResult_t code, const char* call, const std::string& context,
               ncclComm_t comm = nullptr) {
  if (code == ncclSuccess) return;
  const char* detail = ncclGetLastError(comm);
  IMERGE_FAIL(call, " failed", context, ": ", ncclGetErrorString(code),
              (detail && *detail) ? std::string(" (") + detail + ")" : std::string(),
              ". Causes: another rank exited or failed (check its output for an earlier "
              "error), the ranks passed different sizes to the same all-reduce, or the GPUs "
              "cannot reach each other (NCCL_DEBUG=INFO prints NCCL's view)");
}

std::string rankContext(int rank, int size) {
  return " on rank " + std::to_string(rank) + " of " + std::to_string(size);
}

}  // namespace

NcclCommunicator::NcclCommunicator(Communicator& host, cudaStream_t computeStream,
                                   const NcclOptions& options)
    : host_(host),
      options_(options),
      rank_(host.rank()),
      size_(host.size()),
      computeStream_(computeStream) {
  IMERGE_CHECK(options.timeoutSeconds >= 0,
               "NcclOptions::timeoutSeconds must be >= 0 (0 waits forever), got ",
               options.timeoutSeconds);
  const std::string where = rankContext(rank_, size_);
  int deviceCount = 0;
  const cudaError_t countCode = cudaGetDeviceCount(&deviceCount);
  IMERGE_CHECK(countCode == cudaSuccess && deviceCount > 0, "NcclCommunicator", where,
               ": no usable GPU (cudaGetDeviceCount: ",
               countCode == cudaSuccess ? "0 devices" : cudaGetErrorString(countCode),
               "). Run the NCCL backend on a machine with NVIDIA GPUs and a driver, or use the "
               "MPI backend for host buffers");
  device_ = options.device >= 0 ? options.device : localRank() % deviceCount;
  IMERGE_CHECK(device_ < deviceCount, "NcclOptions::device ", device_, where,
               ": this machine has only ", deviceCount, " GPU(s)");

  // The header may be newer than the library the process loaded.
  int loadedVersion = 0;
  checkNccl(ncclGetVersion(&loadedVersion), "ncclGetVersion", where);
  IMERGE_CHECK(loadedVersion >= NCCL_VERSION(2, 10, 0), "NcclCommunicator", where,
               ": the loaded NCCL library is version code ", loadedVersion,
               "; imerge needs NCCL 2.10 or later (ncclAvg). Point LD_LIBRARY_PATH at a newer "
               "libnccl.so");

  try {
    checkCuda(cudaSetDevice(device_), "cudaSetDevice", where);
    // The id is the rendezvous of the NCCL world: created once, on rank 0, and sent to all.
    ncclUniqueId id{};
    if (rank_ == 0) checkNccl(ncclGetUniqueId(&id), "ncclGetUniqueId", where);
    host_.broadcast(&id, sizeof id, 0);
    checkCuda(cudaStreamCreateWithFlags(&commStream_, cudaStreamNonBlocking),
              "cudaStreamCreateWithFlags", where);
    checkCuda(cudaEventCreateWithFlags(&computeReady_, cudaEventDisableTiming),
              "cudaEventCreateWithFlags", where);
    ncclComm_t comm = nullptr;
    checkNccl(ncclCommInitRank(&comm, size_, id, rank_), "ncclCommInitRank", where);
    comm_ = comm;
  } catch (...) {
    if (computeReady_) cudaEventDestroy(computeReady_);
    if (commStream_) cudaStreamDestroy(commStream_);
    throw;
  }
  poller_ = std::thread([this] { pollerMain(); });
}

NcclCommunicator::~NcclCommunicator() {
  if (shutDown_) return;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (poller_.joinable()) poller_.join();
  // Never ncclCommDestroy here: it could wait for ranks that are gone. Abort frees it at once.
  if (comm_) ncclCommAbort(comm_);
  for (cudaEvent_t event : freeEvents_) cudaEventDestroy(event);
  if (computeReady_) cudaEventDestroy(computeReady_);
  if (commStream_) cudaStreamDestroy(commStream_);
}

Device& NcclCommunicator::bufferDevice() const {
  return cudaDevice(device_);
}

WorkHandle NcclCommunicator::submit(std::string label, CommTask task) {
  return host_.submit(std::move(label), std::move(task));
}

void NcclCommunicator::setComputeStream(cudaStream_t stream) {
  std::lock_guard lock(mutex_);
  computeStream_ = stream;
}

cudaStream_t NcclCommunicator::computeStream() const {
  std::lock_guard lock(mutex_);
  return computeStream_;
}

cudaEvent_t NcclCommunicator::takeEvent() {
  if (!freeEvents_.empty()) {
    cudaEvent_t event = freeEvents_.back();
    freeEvents_.pop_back();
    return event;
  }
  cudaEvent_t event = nullptr;
  checkCuda(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreateWithFlags",
            rankContext(rank_, size_));
  return event;
}

WorkHandle NcclCommunicator::allreduceSumAsync(float* data, size_t count, std::string label) {
  return enqueue(CollectiveKind::AllReduce, data, count, ncclSum, nullptr, nullptr, nullptr,
                 std::move(label));
}

WorkHandle NcclCommunicator::collectiveAsync(CollectiveKind kind, float* data, size_t count,
                                             const DeviceSync& sync, std::string label) {
  return enqueue(kind, data, count, ncclAvg, sync.ready, sync.started, sync.finished,
                 std::move(label));
}

void NcclCommunicator::issue(CollectiveKind kind, float* data, size_t count, int op,
                             const std::string& where) {
  const auto reduction = static_cast<ncclRedOp_t>(op);
  const size_t ranks = static_cast<size_t>(size_);
  if (kind == CollectiveKind::AllReduce) {
    checkNccl(ncclAllReduce(data, data, count, ncclFloat, reduction, comm_, commStream_),
              "ncclAllReduce", where, comm_);
    return;
  }
  if (count % ranks == 0) {
    // Equal blocks: NCCL's own halves, in place (this rank's block is its part of the buffer).
    const size_t block = count / ranks;
    float* mine = data + static_cast<size_t>(rank_) * block;
    if (kind == CollectiveKind::ReduceScatter) {
      checkNccl(ncclReduceScatter(data, mine, block, ncclFloat, reduction, comm_, commStream_),
                "ncclReduceScatter", where, comm_);
    } else {
      checkNccl(ncclAllGather(mine, data, block, ncclFloat, comm_, commStream_), "ncclAllGather",
                where, comm_);
    }
    return;
  }
  // Unequal blocks: one rooted collective per block, fused by the group into one launch. The
  // group is closed even when a call in it fails, so the communicator stays usable for abort.
  ncclResult_t first = ncclGroupStart();
  const char* failedCall = "ncclGroupStart";
  for (int root = 0; root < size_ && first == ncclSuccess; ++root) {
    const BlockRange block = blockOf(count, root, size_);
    if (block.count == 0) continue;
    float* start = data + block.offset;
    if (kind == CollectiveKind::ReduceScatter) {
      first = ncclReduce(start, start, block.count, ncclFloat, reduction, root, comm_, commStream_);
      failedCall = "ncclReduce";
    } else {
      first = ncclBroadcast(start, start, block.count, ncclFloat, root, comm_, commStream_);
      failedCall = "ncclBroadcast";
    }
  }
  const ncclResult_t ended = ncclGroupEnd();
  checkNccl(first, failedCall, where, comm_);
  checkNccl(ended, "ncclGroupEnd", where, comm_);
}

WorkHandle NcclCommunicator::enqueue(CollectiveKind kind, float* data, size_t count, int op,
                                     cudaEvent_t ready, cudaEvent_t started, cudaEvent_t finished,
                                     std::string label) {
  auto work = std::make_shared<Work>(std::move(label));
  std::unique_lock lock(mutex_);
  if (firstError_ || shutDown_ || stopping_) {
    const std::string why =
        firstError_ ? "an earlier collective of this communicator failed, so the ranks may no "
                      "longer agree on the order of collectives. The first error: " +
                          exceptionMessage(firstError_)
                    : std::string("the communicator was shut down");
    lock.unlock();
    work->markFinished(
        std::make_exception_ptr(Error(std::string(collectiveKindName(kind)) + " '" + work->label() +
                                      "' was not run" + rankContext(rank_, size_) + ": " + why)));
    return work;
  }
  const size_t bytes = count * sizeof(float);
  const std::string where = std::string(" for ") + collectiveKindName(kind) + " '" + work->label() +
                            "' (" + std::to_string(bytes) + " bytes)" + rankContext(rank_, size_);
  cudaEvent_t done = nullptr;
  try {
    checkCuda(cudaSetDevice(device_), "cudaSetDevice", where);
    done = takeEvent();
    // The all-reduce must see the gradients the compute stream is still producing.
    if (!ready) {
      checkCuda(cudaEventRecord(computeReady_, computeStream_), "cudaEventRecord", where);
      ready = computeReady_;
    }
    checkCuda(cudaStreamWaitEvent(commStream_, ready, 0), "cudaStreamWaitEvent", where);
    // After the wait, so that the mark completes when the all-reduce can begin.
    if (started) checkCuda(cudaEventRecord(started, commStream_), "cudaEventRecord", where);
    work->markStarted();  // enqueued; the device starts it when the compute stream gets there
    issue(kind, data, count, op, where);
    if (finished) checkCuda(cudaEventRecord(finished, commStream_), "cudaEventRecord", where);
    checkCuda(cudaEventRecord(done, commStream_), "cudaEventRecord", where);
    inFlight_.push_back({work, done, bytes, CommClock::now()});
  } catch (...) {
    if (done) freeEvents_.push_back(done);
    if (!firstError_) firstError_ = std::current_exception();
    lock.unlock();
    work->markFinished(std::current_exception());
    return work;
  }
  lock.unlock();
  wake_.notify_all();
  return work;
}

void NcclCommunicator::waitOnStream(const WorkHandle& work, cudaStream_t stream) {
  std::lock_guard lock(mutex_);
  // Under the lock the poller cannot recycle the event between the lookup and the wait; a later
  // re-record of a recycled event does not affect a wait already enqueued.
  for (const InFlight& flight : inFlight_) {
    if (flight.work == work) {
      checkCuda(cudaSetDevice(device_), "cudaSetDevice", rankContext(rank_, size_));
      checkCuda(cudaStreamWaitEvent(stream, flight.done, 0), "cudaStreamWaitEvent",
                " for collective '" + work->label() + "'" + rankContext(rank_, size_));
      return;
    }
  }
}

void NcclCommunicator::pollerMain() {
  cudaSetDevice(device_);
  using namespace std::chrono;
  auto pause = microseconds(20);
  for (;;) {
    InFlight front;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !inFlight_.empty(); });
      if (inFlight_.empty()) return;  // stopping, nothing left
      if (stopping_ && !shutDown_) {
        // The destructor: nothing more will be waited for.
        for (InFlight& flight : inFlight_) {
          flight.work->markFinished(
              std::make_exception_ptr(Error("collective '" + flight.work->label() +
                                            "' was abandoned: the "
                                            "NcclCommunicator was destroyed before it completed")));
          freeEvents_.push_back(flight.done);
        }
        inFlight_.clear();
        return;
      }
      front = inFlight_.front();
    }

    std::string failure;
    const cudaError_t query = cudaEventQuery(front.done);
    if (query == cudaSuccess) {
      {
        std::lock_guard lock(mutex_);
        inFlight_.pop_front();
        freeEvents_.push_back(front.done);
      }
      front.work->markFinished(nullptr);
      pause = microseconds(20);
      continue;
    }
    const std::string where = rankContext(rank_, size_);
    if (query != cudaErrorNotReady) {
      failure = std::string("collective '") + front.work->label() + "' (" +
                std::to_string(front.bytes) + " bytes)" + where +
                ": cudaEventQuery failed: " + cudaGetErrorName(query) + ": " +
                cudaGetErrorString(query);
    } else {
      ncclResult_t asyncError = ncclSuccess;
      ncclCommGetAsyncError(comm_, &asyncError);
      const double waited = duration<double>(CommClock::now() - front.enqueuedAt).count();
      if (asyncError != ncclSuccess && asyncError != ncclInProgress) {
        failure = std::string("collective '") + front.work->label() + "' (" +
                  std::to_string(front.bytes) + " bytes)" + where + ": NCCL reported " +
                  ncclGetErrorString(asyncError) +
                  ". Causes: another rank exited or failed (check its output for an earlier "
                  "error), or the GPUs cannot reach each other (NCCL_DEBUG=INFO shows why)";
      } else if (options_.timeoutSeconds > 0 && waited > options_.timeoutSeconds) {
        failure = std::string("collective '") + front.work->label() + "' (" +
                  std::to_string(front.bytes) + " bytes) did not complete within " +
                  formatSeconds(options_.timeoutSeconds) + " s" + where +
                  ": another rank has probably exited or stopped; check the other ranks' "
                  "output for an earlier error. Other causes: the ranks launched different "
                  "all-reduces or in a different order, or a rank is much slower (raise "
                  "NcclOptions::timeoutSeconds, 0 waits forever). Call abort() to end the job";
      }
    }
    if (!failure.empty()) {
      // Every outstanding all-reduce shares the stream that is stuck or broken: fail them all,
      // and every later one (allreduceSumAsync checks firstError_).
      std::deque<InFlight> failed;
      const auto error = std::make_exception_ptr(Error(failure));
      {
        std::lock_guard lock(mutex_);
        if (!firstError_) firstError_ = error;
        failed.swap(inFlight_);
        // The events may still be pending on a stuck stream; they are destroyed, not reused
        // (cudaEventDestroy of a pending event releases it once it completes).
        for (InFlight& flight : failed) cudaEventDestroy(flight.done);
      }
      for (InFlight& flight : failed) flight.work->markFinished(error);
      continue;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min<microseconds>(pause * 2, milliseconds(1));
  }
}

AllreduceTimer NcclCommunicator::collectiveTimer(size_t maxBytes, CollectiveKind kind) {
  // The buffer and the events live as long as the timer; every call runs on the communication
  // thread, inside the measurement's task.
  struct DeviceState {
    int device = 0;
    Tensor buffer;  // float32 [maxBytes / 4] on this rank's GPU
    std::vector<cudaEvent_t> events;
    ~DeviceState() {
      cudaSetDevice(device);
      for (cudaEvent_t event : events) cudaEventDestroy(event);
    }
  };
  auto state = std::make_shared<DeviceState>();
  state->device = device_;
  state->buffer = Tensor::zeros({static_cast<int64_t>(std::max<size_t>(maxBytes, 4) / 4)},
                                DType::Float32, bufferDevice());
  // The zeros are written on the compute stream; the timed all-reduces run on ours.
  cudaDevice(device_).synchronize();
  return [this, state, kind](CollectiveOps&, size_t bytes, int count) {
    const std::string name = collectiveKindName(kind);
    const std::string where = " in the " + name + " timer" + rankContext(rank_, size_);
    IMERGE_CHECK(bytes / sizeof(float) <= static_cast<size_t>(state->buffer.numel()), "NCCL ", name,
                 " timer: ", bytes, " bytes exceed its buffer of ", state->buffer.bytes());
    checkCuda(cudaSetDevice(device_), "cudaSetDevice", where);
    while (state->events.size() < 2 * static_cast<size_t>(count)) {
      cudaEvent_t event = nullptr;
      checkCuda(cudaEventCreate(&event), "cudaEventCreate", where);
      state->events.push_back(event);
    }
    float* data = state->buffer.data<float>();
    std::vector<WorkHandle> works;
    for (int rep = 0; rep < count; ++rep) {
      cudaEvent_t started = state->events[2 * rep], finished = state->events[2 * rep + 1];
      works.push_back(enqueue(kind, data, bytes / sizeof(float), ncclSum, nullptr, started,
                              finished, name + " timer"));
    }
    for (const WorkHandle& work : works) work->wait();
    std::vector<double> times;
    for (int rep = 0; rep < count; ++rep) {
      float milliseconds = 0;
      checkCuda(
          cudaEventElapsedTime(&milliseconds, state->events[2 * rep], state->events[2 * rep + 1]),
          "cudaEventElapsedTime", where);
      times.push_back(static_cast<double>(milliseconds) * 1e-3);
    }
    return times;
  };
}

void NcclCommunicator::abort(int exitCode) {
  // The job ends with the process; NCCL's resources go with it.
  host_.abort(exitCode);
  std::_Exit(exitCode);  // not reached; the compiler does not trust [[noreturn]] on a virtual
}

void NcclCommunicator::shutdown() {
  std::unique_lock lock(mutex_);
  if (shutDown_) return;
  shutDown_ = true;  // no new all-reduces from here on
  std::vector<WorkHandle> outstanding;
  for (const InFlight& flight : inFlight_) outstanding.push_back(flight.work);
  lock.unlock();
  // The poller finishes them: completed, failed, or timed out.
  for (const WorkHandle& work : outstanding) {
    try {
      work->wait();
    } catch (...) {
      // Already recorded in firstError_; shutdown still releases everything.
    }
  }
  lock.lock();
  stopping_ = true;
  const bool failed = firstError_ != nullptr;
  lock.unlock();
  wake_.notify_all();
  poller_.join();

  const std::string where = rankContext(rank_, size_);
  ncclComm_t comm = comm_;
  comm_ = nullptr;
  if (failed) {
    // A failed communicator may have a kernel waiting for a peer forever: abort, do not wait.
    ncclCommAbort(comm);
  } else {
    checkNccl(ncclCommFinalize(comm), "ncclCommFinalize", where, comm);
    checkNccl(ncclCommDestroy(comm), "ncclCommDestroy", where);
  }
  for (cudaEvent_t event : freeEvents_) cudaEventDestroy(event);
  freeEvents_.clear();
  checkCuda(cudaEventDestroy(computeReady_), "cudaEventDestroy", where);
  computeReady_ = nullptr;
  checkCuda(cudaStreamDestroy(commStream_), "cudaStreamDestroy", where);
  commStream_ = nullptr;
}

std::unique_ptr<DeviceCommunicator> makeNcclCommunicator(Communicator& host, int device,
                                                         double timeoutSeconds) {
  return std::make_unique<NcclCommunicator>(host, nullptr, NcclOptions{device, timeoutSeconds});
}

}  // namespace imerge::distributed
