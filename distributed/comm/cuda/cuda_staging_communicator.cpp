// The MPI staging backend's tasks, its pinned buffer and its timer (the design is in the header).
#include "distributed/comm/cuda/cuda_staging_communicator.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <vector>

#include "core/cuda/cuda_device.h"
#include "core/error.h"
#include "core/tensor.h"

namespace imerge::distributed {

namespace {

void checkCuda(cudaError_t code, const char* call, const std::string& where) {
  if (code == cudaSuccess) return;
  IMERGE_FAIL(call, " failed", where, ": ", cudaGetErrorName(code), ": ", cudaGetErrorString(code));
}

}  // namespace

StagingCommunicator::StagingCommunicator(Communicator& host, int device)
    : host_(host), device_(device) {
  const std::string where = " (MPI staging backend, rank " + std::to_string(host.rank()) + ")";
  CudaDevice& gpu = cudaDevice(device);  // throws naming the count when `device` does not exist
  gpu.makeCurrent();
  checkCuda(cudaStreamCreateWithFlags(&copyStream_, cudaStreamNonBlocking),
            "cudaStreamCreateWithFlags", where);
}

StagingCommunicator::~StagingCommunicator() {
  if (shutDown_) return;
  // Without shutdown() a task may still be running on the host's thread with the buffer and the
  // stream; they are left to the process's end rather than freed under it.
}

Device& StagingCommunicator::bufferDevice() const {
  return cudaDevice(device_);
}

WorkHandle StagingCommunicator::submit(std::string label, CommTask task) {
  return host_.submit(std::move(label), std::move(task));
}

WorkHandle StagingCommunicator::allreduceAverageAsync(float* data, size_t count,
                                                      const DeviceSync& sync, std::string label) {
  IMERGE_CHECK(sync.ready, "StagingCommunicator: all-reduce '", label,
               "' has no ready event; record one on the compute stream when the buffer is final");
  IMERGE_CHECK(!shutDown_, "StagingCommunicator: all-reduce '", label,
               "' after shutdown() on rank ", rank());
  const std::string taskLabel = label;
  return host_.submit(std::move(label), [this, data, count, sync, taskLabel](CollectiveOps& ops) {
    average(ops, data, count, sync, taskLabel);
  });
}

void StagingCommunicator::waitOnStream(const WorkHandle& work, CUstream_st*) {
  work->wait();
}

void StagingCommunicator::reserveHost(size_t bytes, const std::string& where) {
  if (bytes <= pinnedBytes_) return;
  // No copy uses the old buffer any more: every task ends after its copies.
  if (pinned_) checkCuda(cudaFreeHost(pinned_), "cudaFreeHost", where);
  pinned_ = nullptr;
  pinnedBytes_ = 0;
  void* block = nullptr;
  checkCuda(cudaMallocHost(&block, bytes), "cudaMallocHost", where);
  pinned_ = static_cast<float*>(block);
  pinnedBytes_ = bytes;
}

void StagingCommunicator::average(CollectiveOps& ops, float* data, size_t count,
                                  const DeviceSync& sync, const std::string& label) {
  const size_t bytes = count * sizeof(float);
  const std::string where = " for all-reduce '" + label + "' (" + std::to_string(bytes) +
                            " bytes, MPI staging) on rank " + std::to_string(rank()) + " of " +
                            std::to_string(size());
  checkCuda(cudaSetDevice(device_), "cudaSetDevice", where);  // this is the host's thread
  reserveHost(bytes, where);
  if (sync.ready)
    checkCuda(cudaStreamWaitEvent(copyStream_, sync.ready, 0), "cudaStreamWaitEvent", where);
  if (sync.started) checkCuda(cudaEventRecord(sync.started, copyStream_), "cudaEventRecord", where);
  checkCuda(cudaMemcpyAsync(pinned_, data, bytes, cudaMemcpyDeviceToHost, copyStream_),
            "cudaMemcpyAsync (device to host)", where);
  checkCuda(cudaStreamSynchronize(copyStream_), "cudaStreamSynchronize", where);
  ops.allreduceSum(pinned_, count);
  // The one place these gradients become averages, as on the CPU path.
  const float scale = 1.0f / static_cast<float>(size());
  for (size_t i = 0; i < count; ++i) pinned_[i] *= scale;
  checkCuda(cudaMemcpyAsync(data, pinned_, bytes, cudaMemcpyHostToDevice, copyStream_),
            "cudaMemcpyAsync (host to device)", where);
  if (sync.finished)
    checkCuda(cudaEventRecord(sync.finished, copyStream_), "cudaEventRecord", where);
  checkCuda(cudaStreamSynchronize(copyStream_), "cudaStreamSynchronize", where);
}

AllreduceTimer StagingCommunicator::allreduceTimer(size_t maxBytes) {
  auto buffer = std::make_shared<Tensor>(Tensor::zeros(
      {static_cast<int64_t>(std::max<size_t>(maxBytes, 4) / 4)}, DType::Float32, bufferDevice()));
  // The zeros are written on the compute stream; the timed copies run on ours.
  cudaDevice(device_).synchronize();
  return [this, buffer](CollectiveOps& ops, size_t bytes, int count) {
    IMERGE_CHECK(bytes / sizeof(float) <= static_cast<size_t>(buffer->numel()),
                 "MPI staging all-reduce timer: ", bytes, " bytes exceed its buffer of ",
                 buffer->bytes());
    std::vector<double> times;
    for (int rep = 0; rep < count; ++rep) {
      const auto start = CommClock::now();
      average(ops, buffer->data<float>(), bytes / sizeof(float), {}, "all-reduce timer");
      times.push_back(std::chrono::duration<double>(CommClock::now() - start).count());
    }
    return times;
  };
}

void StagingCommunicator::abort(int exitCode) {
  host_.abort(exitCode);
  std::_Exit(exitCode);  // not reached; the compiler does not trust [[noreturn]] on a virtual
}

void StagingCommunicator::shutdown() {
  if (shutDown_) return;
  shutDown_ = true;
  // The host runs tasks in order: once this one has run, every earlier one has finished.
  try {
    host_.submit("MPI staging shutdown", [](CollectiveOps&) {})->wait();
  } catch (...) {
    // The host communicator failed; a task may still be stuck in MPI with the buffer, so it is
    // left to the process's end (which an abort brings soon).
    return;
  }
  const std::string where = " (MPI staging backend shutdown, rank " + std::to_string(rank()) + ")";
  checkCuda(cudaSetDevice(device_), "cudaSetDevice", where);
  if (pinned_) checkCuda(cudaFreeHost(pinned_), "cudaFreeHost", where);
  pinned_ = nullptr;
  pinnedBytes_ = 0;
  checkCuda(cudaStreamDestroy(copyStream_), "cudaStreamDestroy", where);
  copyStream_ = nullptr;
}

std::unique_ptr<DeviceCommunicator> makeStagingCommunicator(Communicator& host, int device) {
  return std::make_unique<StagingCommunicator>(host, device);
}

}  // namespace imerge::distributed
