// The NCCL communicator's bootstrap, its enqueueing of device all-reduces and the poller that
// turns completion events into finished Works (the design is in the header).
//
// Locking: mutex_ serialises every NCCL call on comm_ (a Reducer may launch from backward's
// thread while shutdown runs on the main one) and guards the in-flight list. The poller never
// holds it while it sleeps or queries an event, so launching is never held up by polling.
#include "distributed/nccl_communicator.h"

#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "core/error.h"
#include "distributed/mpi_communicator.h"

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

std::string formatSeconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", seconds);
  return text;
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
  auto work = std::make_shared<Work>(std::move(label));
  std::unique_lock lock(mutex_);
  if (firstError_ || shutDown_ || stopping_) {
    const std::string why =
        firstError_ ? "an earlier all-reduce of this communicator failed, so the ranks may no "
                      "longer agree on the order of collectives. The first error: " +
                          exceptionMessage(firstError_)
                    : std::string("the communicator was shut down");
    lock.unlock();
    work->markFinished(
        std::make_exception_ptr(Error("all-reduce '" + work->label() + "' was not run" +
                                      rankContext(rank_, size_) + ": " + why)));
    return work;
  }
  const size_t bytes = count * sizeof(float);
  const std::string where = " for all-reduce '" + work->label() + "' (" + std::to_string(bytes) +
                            " bytes)" + rankContext(rank_, size_);
  try {
    checkCuda(cudaSetDevice(device_), "cudaSetDevice", where);
    // The all-reduce must see the gradients the compute stream is still producing.
    checkCuda(cudaEventRecord(computeReady_, computeStream_), "cudaEventRecord", where);
    checkCuda(cudaStreamWaitEvent(commStream_, computeReady_, 0), "cudaStreamWaitEvent", where);
    work->markStarted();  // enqueued; the device starts it when the compute stream gets there
    checkNccl(ncclAllReduce(data, data, count, ncclFloat, ncclSum, comm_, commStream_),
              "ncclAllReduce", where, comm_);
    cudaEvent_t done = takeEvent();
    checkCuda(cudaEventRecord(done, commStream_), "cudaEventRecord", where);
    inFlight_.push_back({work, done, bytes, CommClock::now()});
  } catch (...) {
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
                " for all-reduce '" + work->label() + "'" + rankContext(rank_, size_));
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
              std::make_exception_ptr(Error("all-reduce '" + flight.work->label() +
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
      failure = std::string("all-reduce '") + front.work->label() + "' (" +
                std::to_string(front.bytes) + " bytes)" + where +
                ": cudaEventQuery failed: " + cudaGetErrorName(query) + ": " +
                cudaGetErrorString(query);
    } else {
      ncclResult_t asyncError = ncclSuccess;
      ncclCommGetAsyncError(comm_, &asyncError);
      const double waited = duration<double>(CommClock::now() - front.enqueuedAt).count();
      if (asyncError != ncclSuccess && asyncError != ncclInProgress) {
        failure = std::string("all-reduce '") + front.work->label() + "' (" +
                  std::to_string(front.bytes) + " bytes)" + where + ": NCCL reported " +
                  ncclGetErrorString(asyncError) +
                  ". Causes: another rank exited or failed (check its output for an earlier "
                  "error), or the GPUs cannot reach each other (NCCL_DEBUG=INFO shows why)";
      } else if (options_.timeoutSeconds > 0 && waited > options_.timeoutSeconds) {
        failure = std::string("all-reduce '") + front.work->label() + "' (" +
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

}  // namespace imerge::distributed
