// Collectives over DEVICE buffers: what the Reducer needs to average gradients that live on a
// GPU, and the choice of a rank's GPU.
//
// Ordering with the compute stream (the CudaDevice's stream, where backward writes the
// gradients) is by CUDA events, never by host waits where the backend can avoid them:
//  - the caller records `DeviceSync::ready` on the compute stream when a bucket's gradients are
//    final; the collective waits for it on the device (cudaStreamWaitEvent);
//  - waitOnStream(work, stream) makes the compute stream wait for the collective's completion.
// Device collectives of one communicator complete in the order they were called, so waiting for
// the last one waits for all of them.
//
// Backends:
//  - NCCL (nccl_communicator.h): the all-reduce runs on the communicator's own non-blocking
//    stream; the host never waits. One GPU per rank (NCCL refuses two ranks on one GPU).
//  - MPI staging (cuda_staging_communicator.h): device -> pinned host copy, MPI all-reduce on the
//    communication thread, host -> device copy (what Horovod does without CUDA-aware MPI).
//    waitOnStream waits on the host for the MPI part. Several ranks may share one GPU, which is
//    how multi-rank runs are tested on a one-GPU machine.
// The factories exist in every build; without CUDA they throw a clear error
// (no_cuda/device_backends.cpp). This header needs no CUDA headers.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "distributed/comm/allreduce_timer.h"
#include "distributed/comm/communicator.h"

// The CUDA runtime's handle types, declared as it defines them (cudaEvent_t is CUevent_st*,
// cudaStream_t is CUstream_st*).
struct CUevent_st;
struct CUstream_st;

namespace imerge {
class Device;
}

namespace imerge::distributed {

// The events that order and time one device collective; all belong to the buffer's GPU.
struct DeviceSync {
  // Recorded on the compute stream when the buffer's contents were final; the collective starts
  // on the device only after it. Required (the staging backend refuses a null one; NCCL then
  // records one itself on the compute stream it was given).
  CUevent_st* ready = nullptr;
  // Timing events (created with timing) recorded on the communicator's stream right before and
  // after the collective, so their times bracket it on the device. Null: not recorded.
  CUevent_st* started = nullptr;
  CUevent_st* finished = nullptr;
};

// allreduceSumAsync keeps each backend's own meaning: device buffers for NCCL, host buffers for
// the staging backend (as for MPI). Gradients go through collectiveAsync.
class DeviceCommunicator : public Communicator {
 public:
  // The GPU whose buffers this communicator reduces (a CudaDevice).
  virtual Device& bufferDevice() const = 0;

  // One of a bucket's collectives, in place on `count` floats at the device pointer `data`.
  // Where it leaves results they are averages over ranks (the sum divided by size(), computed
  // once, on the communication side):
  //  - AllReduce: every element becomes its average;
  //  - ReduceScatter: this rank's block (blockOf) becomes its average; the rest of `data` is
  //    unspecified until the AllGather;
  //  - AllGather: every rank's block (its average, from a ReduceScatter of the same buffer)
  //    is copied into the other ranks' buffers.
  // Starts on the device after `sync.ready`; returns at once (NCCL) or after queueing the host
  // part (staging). The buffer must not be written by any stream until the collective
  // completed, e.g. until a waitOnStream on the writing stream. The Work completes when the
  // buffer holds the results.
  virtual WorkHandle collectiveAsync(CollectiveKind kind, float* data, size_t count,
                                     const DeviceSync& sync, std::string label) = 0;

  // Makes `stream` (a stream of bufferDevice()) wait, on the device, until `work` has completed.
  // NCCL returns at once; staging waits on the host for the work first. A completed work, or one
  // that is not a device collective of this communicator, needs no wait.
  virtual void waitOnStream(const WorkHandle& work, CUstream_st* stream) = 0;

  // Times this backend's device collectives of `kind` on up to `maxBytes` (for the start-up
  // measurement of the communication model; comm_measurement.h). Called on the communication
  // thread.
  virtual AllreduceTimer collectiveTimer(size_t maxBytes, CollectiveKind kind) = 0;
};

// NCCL over `host` (which bootstraps it and runs the host tasks; it must outlive the result) on
// GPU `device`, every rank a different GPU. A device all-reduce not complete after
// `timeoutSeconds` (0: never) fails its Work.
std::unique_ptr<DeviceCommunicator> makeNcclCommunicator(Communicator& host, int device,
                                                         double timeoutSeconds);
// MPI through pinned host copies over `host` (whose communication thread runs them; it must
// outlive the result) on GPU `device`; ranks may share a GPU.
std::unique_ptr<DeviceCommunicator> makeStagingCommunicator(Communicator& host, int device);

// The GPU of a rank: its local rank modulo the machine's `gpuCount` GPUs. With `exclusive` (NCCL,
// which refuses two ranks on one GPU) more local ranks than GPUs is an error naming both counts
// and the way out; without (the MPI staging backend) ranks share GPUs round-robin. No GPU at
// all is an error quoting `whyNoGpu`. `backend` names the backend in messages.
int gpuForLocalRank(int localRank, int localRanks, int gpuCount, bool exclusive,
                    const std::string& backend, const std::string& whyNoGpu = {});

}  // namespace imerge::distributed
