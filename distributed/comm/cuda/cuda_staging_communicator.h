// The MPI staging backend: device buffers averaged by the host communicator (MPI) through pinned
// host copies, as Horovod does without a CUDA-aware MPI (CUDA builds only; code built without
// CUDA reaches it through makeStagingCommunicator in device_communicator.h).
//
// Each device collective is one task on the host communicator's thread, queued in call order:
//   copy stream waits for `ready` -> `started` mark -> device-to-host copy into pinned memory ->
//   (thread waits for the copy) -> MPI collective (sum) -> divide by the ranks -> host-to-device
//   copy -> `finished` mark -> (thread waits for the copy).
// An all-reduce copies the whole buffer both ways; a reduce-scatter copies the whole buffer to
// the host and only this rank's averaged block back, an all-gather only this rank's block to the
// host and the whole buffer back.
// So a Work completes only when the averaged values are back in the device buffer, and
// waitOnStream needs no device wait: it waits on the host for the Work (the host part cannot be
// joined by an event that does not exist yet). The compute stream keeps running during the
// MPI part; only the host waits, in Reducer::finish, as on the CPU path.
//
// Why it exists: several ranks can share ONE GPU (NCCL refuses that), so the device path of the
// Reducer can be run with several ranks on a one-GPU machine against one rank; and it works on
// machines whose GPUs NCCL cannot connect. It is slower than NCCL: two PCIe copies per bucket.
//
// One pinned buffer serves every task (they run one at a time, and each ends with its copies
// done); it grows to the largest bucket and is freed by shutdown().
#pragma once

#include <cuda_runtime_api.h>

#include "distributed/comm/device_communicator.h"

namespace imerge::distributed {

class StagingCommunicator final : public DeviceCommunicator {
 public:
  // `host` runs the tasks and the host collectives; it must outlive this communicator and be
  // shut down after it. `device` is this rank's GPU.
  StagingCommunicator(Communicator& host, int device);
  // Frees the stream and the pinned buffer; call shutdown() first when tasks were submitted
  // (a task still running would use them).
  ~StagingCommunicator() override;
  StagingCommunicator(const StagingCommunicator&) = delete;
  StagingCommunicator& operator=(const StagingCommunicator&) = delete;

  int rank() const override { return host_.rank(); }
  int size() const override { return host_.size(); }
  std::string backendName() const override { return "mpi-staged"; }
  Device& bufferDevice() const override;

  WorkHandle submit(std::string label, CommTask task) override;
  WorkHandle collectiveAsync(CollectiveKind kind, float* data, size_t count, const DeviceSync& sync,
                             std::string label) override;
  // Waits on the host for `work`; its copies are then complete, so `stream` needs no wait.
  void waitOnStream(const WorkHandle& work, CUstream_st* stream) override;
  // Device-to-host, MPI and host-to-device of a buffer of its own, timed on the host (each is
  // synchronous on the communication thread).
  AllreduceTimer collectiveTimer(size_t maxBytes, CollectiveKind kind) override;

  [[noreturn]] void abort(int exitCode) override;
  // Waits for the tasks submitted so far, then frees the stream and the pinned buffer. Does not
  // shut the host communicator down (its owner does). Idempotent.
  void shutdown() override;

 private:
  // On the communication thread: one staged collective (see the file comment).
  void run(CollectiveKind kind, CollectiveOps& ops, float* data, size_t count,
           const DeviceSync& sync, const std::string& label);
  void reserveHost(size_t bytes, const std::string& where);

  Communicator& host_;
  int device_;
  cudaStream_t copyStream_ = nullptr;
  // Used only by the communication thread (and by shutdown, after it drained the tasks).
  float* pinned_ = nullptr;
  size_t pinnedBytes_ = 0;
  bool shutDown_ = false;
};

}  // namespace imerge::distributed
