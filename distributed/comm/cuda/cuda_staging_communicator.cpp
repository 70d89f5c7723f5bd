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

WorkHandle StagingCommunicator::collectiveAsync(CollectiveKind kind, float* data, size_t count,
                                                const DeviceSync& sync, std::string label) {
  IMERGE_CHECK(sync.ready, "StagingCommunicator: ", collectiveKindName(kind), " '", label,
               "' has no ready event; record one on the compute stream when the buffer is final");
  IMERGE_CHECK(!shutDown_, "StagingCommunicator: ", collectiveKindName(kind), " '", label,
               "' after shutdown() on rank ", rank());
  const std::string taskLabel = label;
  return host_.submit(std::move(label),
                      [this, kind, data, count, sync, taskLabel](CollectiveOps& ops) {
                        run(kind, ops, data, count, sync, taskLabel);
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

void StagingCommunicator::run(CollectiveKind kind, CollectiveOps& ops, float* data, size_t count,
                              const DeviceSync& sync, const std::string& label) {
  const size_t bytes = count * sizeof(float);
  const std::string where = std::string(" for ") + collectiveKindName(kind) + " '" + label + "' (" +
                            std::to_string(bytes) + " bytes, MPI staging) on rank " +
                            std::to_string(rank()) + " of " + std::to_string(size());
  // What crosses PCIe: the whole buffer, or only this rank's block where the other blocks
  // carry nothing this rank needs (into a reduce-scatter's result, out of an all-gather's
  // input).
  const BlockRange whole{0, count};
  const BlockRange mine = blockOf(count, rank(), size());
  const BlockRange toHost = kind == CollectiveKind::AllGather ? mine : whole;
  const BlockRange toDevice = kind == CollectiveKind::ReduceScatter ? mine : whole;
  auto copy = [&](float* to, const float* from, BlockRange range, cudaMemcpyKind direction,
                  const char* call) {
    if (range.count == 0) return;
    checkCuda(cudaMemcpyAsync(to + range.offset, from + range.offset, range.count * sizeof(float),
                              direction, copyStream_),
              call, where);
  };

  checkCuda(cudaSetDevice(device_), "cudaSetDevice", where);  // this is the host's thread
  reserveHost(bytes, where);
  if (sync.ready)
    checkCuda(cudaStreamWaitEvent(copyStream_, sync.ready, 0), "cudaStreamWaitEvent", where);
  if (sync.started) checkCuda(cudaEventRecord(sync.started, copyStream_), "cudaEventRecord", where);
  copy(pinned_, data, toHost, cudaMemcpyDeviceToHost, "cudaMemcpyAsync (device to host)");
  checkCuda(cudaStreamSynchronize(copyStream_), "cudaStreamSynchronize", where);
  averageCollective(ops, kind, pinned_, count, rank(), size());
  copy(data, pinned_, toDevice, cudaMemcpyHostToDevice, "cudaMemcpyAsync (host to device)");
  if (sync.finished)
    checkCuda(cudaEventRecord(sync.finished, copyStream_), "cudaEventRecord", where);
  checkCuda(cudaStreamSynchronize(copyStream_), "cudaStreamSynchronize", where);
}

AllreduceTimer StagingCommunicator::collectiveTimer(size_t maxBytes, CollectiveKind kind) {
  auto buffer = std::make_shared<Tensor>(Tensor::zeros(
      {static_cast<int64_t>(std::max<size_t>(maxBytes, 4) / 4)}, DType::Float32, bufferDevice()));
  // The zeros are written on the compute stream; the timed copies run on ours.
  cudaDevice(device_).synchronize();
  return [this, buffer, kind](CollectiveOps& ops, size_t bytes, int count) {
    IMERGE_CHECK(bytes / sizeof(float) <= static_cast<size_t>(buffer->numel()), "MPI staging ",
                 collectiveKindName(kind), " timer: ", bytes, " bytes exceed its buffer of ",
                 buffer->bytes());
    std::vector<double> times;
    for (int rep = 0; rep < count; ++rep) {
      const auto start = CommClock::now();
      run(kind, ops, buffer->data<float>(), bytes / sizeof(float), {},
          std::string(collectiveKindName(kind)) + " timer");
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
