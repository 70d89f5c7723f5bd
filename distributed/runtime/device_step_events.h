// The CUDA events of one training step on a GPU, as the Reducer and DataParallel use them:
//  - synchronisation: each bucket's `ready` event, recorded on the compute stream when the
//    bucket's gradients are final, which its collective waits for (device_communicator.h);
//  - timing: marks recorded on the compute stream (forward start, backward start, each
//    gradient's hook during profiled steps, backward end, optimizer end) and around each
//    bucket's collective on the communication stream.
//
// Why events: on a GPU the host only queues work. A gradient hook fires when backward has
// *queued* the last contribution, long before the device has computed it, so host clocks say
// nothing about device times. Each mark is read after the step (waiting for it if needed) as
// seconds on the device from the start of backward.
//
// A step's marks run from beginStep() to the next beginStep(); a mark not recorded since the
// last beginStep() reads as absent. Every mark reads relative to an origin event recorded by
// beginStep(), so no time difference is negative (cudaEventElapsedTime's order).
//
// The interface exists so the Reducer's device path can be tested on the CPU with a fake
// (tests/distributed/runtime/reducer_device_test.cpp); the CUDA implementation is in
// cuda_step_events.cpp. This header needs no CUDA headers.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>

#include "distributed/comm/device_communicator.h"

namespace imerge::distributed {

enum class StepMark {
  ForwardStart,   // DataParallel::forward, before the model runs
  BackwardStart,  // Reducer::prepareForBackward
  GradReady,      // a parameter's hook (index: the parameter), profiled steps only
  BackwardEnd,    // Reducer::finish, after the last hook, before joining the communication
  StepEnd,        // DataParallel::step, after the optimizer was queued
  BucketStart,    // recorded by the communicator (index: the bucket)
  BucketEnd,
};

// The mark as messages and logs name it ("backward start").
inline const char* stepMarkName(StepMark mark) {
  switch (mark) {
    case StepMark::ForwardStart:
      return "forward start";
    case StepMark::BackwardStart:
      return "backward start";
    case StepMark::GradReady:
      return "gradient ready";
    case StepMark::BackwardEnd:
      return "backward end";
    case StepMark::StepEnd:
      return "optimizer end";
    case StepMark::BucketStart:
      return "bucket start";
    case StepMark::BucketEnd:
      return "bucket end";
  }
  return "unknown mark";
}

class DeviceStepEvents {
 public:
  virtual ~DeviceStepEvents() = default;

  // The GPU and its compute stream (the CudaDevice's stream).
  virtual Device& device() const = 0;
  virtual CUstream_st* computeStream() const = 0;

  // Makes room for `parameters` GradReady marks and `buckets` buckets; only grows, and keeps the
  // marks of the current step (a plan rebuilt after a step must not lose that step's marks).
  virtual void reserve(size_t parameters, size_t buckets) = 0;
  // Starts a step: forgets which marks were recorded and records the origin.
  virtual void beginStep() = 0;
  virtual bool recorded(StepMark mark, size_t index = 0) const = 0;
  // Records `mark` on the compute stream now (not BucketStart/BucketEnd).
  virtual void mark(StepMark mark, size_t index = 0) = 0;
  // Records bucket `bucket`'s ready event on the compute stream now and returns the events its
  // collective waits for and is timed by; its BucketStart and BucketEnd count as recorded from
  // here on (the communicator records them when it launches the collective).
  virtual DeviceSync bucketReady(size_t bucket) = 0;
  // Seconds on the device from BackwardStart to `mark` in the current step (negative before
  // it), waiting until both have completed; nullopt when either was not recorded.
  virtual std::optional<double> secondsFromBackwardStart(StepMark mark, size_t index = 0) = 0;
};

// The CUDA implementation on `device`, a CudaDevice. Throws imerge::Error for another device and
// in builds without CUDA.
std::unique_ptr<DeviceStepEvents> makeDeviceStepEvents(Device& device);

}  // namespace imerge::distributed
