// DeviceStepEvents on a CudaDevice (CUDA builds only; the contract is in device_step_events.h).
//
// Events: the marks are created with timing (cudaEventElapsedTime needs it); the buckets' ready
// events only order streams and are created with cudaEventDisableTiming, the cheapest kind.
// Re-recording an event each step is safe: a cudaStreamWaitEvent already queued uses the state
// the event had when it was queued, and marks are read before the next beginStep().
// Every event belongs to the device's GPU, which is made current before each CUDA call (the
// caller's thread may have another GPU current).
#include <cuda_runtime.h>

#include <array>
#include <string>
#include <vector>

#include "core/cuda/cuda_check.h"
#include "core/cuda/cuda_device.h"
#include "distributed/runtime/device_step_events.h"

namespace imerge::distributed {

namespace {

struct Mark {
  cudaEvent_t event = nullptr;
  bool recorded = false;
};

class CudaStepEvents final : public DeviceStepEvents {
 public:
  explicit CudaStepEvents(CudaDevice& device) : device_(device) {
    device_.makeCurrent();
    for (Mark& mark : fixed_) mark.event = createTimed();
    origin_.event = createTimed();
  }

  ~CudaStepEvents() override {
    // Destroying an event that is still pending is allowed: CUDA releases it once it completes.
    cudaSetDevice(device_.index());
    destroy(origin_);
    for (Mark& mark : fixed_) destroy(mark);
    for (auto* marks : {&gradReady_, &bucketStart_, &bucketEnd_}) {
      for (Mark& mark : *marks) destroy(mark);
    }
    for (cudaEvent_t event : bucketReady_) cudaEventDestroy(event);
  }

  CudaStepEvents(const CudaStepEvents&) = delete;
  CudaStepEvents& operator=(const CudaStepEvents&) = delete;

  Device& device() const override { return device_; }
  CUstream_st* computeStream() const override { return device_.stream(); }

  void reserve(size_t parameters, size_t buckets) override {
    device_.makeCurrent();
    while (gradReady_.size() < parameters) gradReady_.push_back({createTimed(), false});
    while (bucketStart_.size() < buckets) {
      bucketStart_.push_back({createTimed(), false});
      bucketEnd_.push_back({createTimed(), false});
      cudaEvent_t ready = nullptr;
      IMERGE_CUDA_CHECK(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));
      bucketReady_.push_back(ready);
    }
  }

  void beginStep() override {
    origin_.recorded = false;
    for (Mark& mark : fixed_) mark.recorded = false;
    for (auto* marks : {&gradReady_, &bucketStart_, &bucketEnd_}) {
      for (Mark& mark : *marks) mark.recorded = false;
    }
    record(origin_);
  }

  bool recorded(StepMark mark, size_t index) const override {
    const Mark* slot = find(mark, index);
    return slot && slot->recorded;
  }

  void mark(StepMark mark, size_t index) override {
    IMERGE_CHECK(mark != StepMark::BucketStart && mark != StepMark::BucketEnd,
                 "DeviceStepEvents::mark: the communicator records the ", stepMarkName(mark));
    Mark* slot = find(mark, index);
    IMERGE_CHECK(slot, "DeviceStepEvents::mark: no room for ", stepMarkName(mark), " ", index,
                 " (reserve() first)");
    // Without an origin (a Reducer used without DataParallel) the step begins here.
    if (!origin_.recorded) beginStep();
    record(*slot);
  }

  DeviceSync bucketReady(size_t bucket) override {
    IMERGE_CHECK(bucket < bucketReady_.size(), "DeviceStepEvents::bucketReady: bucket ", bucket,
                 " of ", bucketReady_.size(), " (reserve() first)");
    if (!origin_.recorded) beginStep();
    device_.makeCurrent();
    IMERGE_CUDA_CHECK(cudaEventRecord(bucketReady_[bucket], device_.stream()));
    bucketStart_[bucket].recorded = true;
    bucketEnd_[bucket].recorded = true;
    return {bucketReady_[bucket], bucketStart_[bucket].event, bucketEnd_[bucket].event};
  }

  std::optional<double> secondsFromBackwardStart(StepMark mark, size_t index) override {
    const Mark* slot = find(mark, index);
    const Mark& backwardStart = fixed_[static_cast<size_t>(StepMark::BackwardStart)];
    if (!slot || !slot->recorded || !backwardStart.recorded || !origin_.recorded) {
      return std::nullopt;
    }
    return secondsFromOrigin(*slot) - secondsFromOrigin(backwardStart);
  }

 private:
  cudaEvent_t createTimed() {
    cudaEvent_t event = nullptr;
    IMERGE_CUDA_CHECK(cudaEventCreate(&event));
    return event;
  }

  static void destroy(Mark& mark) {
    if (mark.event) cudaEventDestroy(mark.event);
    mark.event = nullptr;
  }

  void record(Mark& mark) {
    device_.makeCurrent();
    IMERGE_CUDA_CHECK(cudaEventRecord(mark.event, device_.stream()));
    mark.recorded = true;
  }

  // Waits for the mark (and the origin, queued before it) and reads the time between them.
  double secondsFromOrigin(const Mark& mark) {
    device_.makeCurrent();
    IMERGE_CUDA_CHECK(cudaEventSynchronize(mark.event));
    IMERGE_CUDA_CHECK(cudaEventSynchronize(origin_.event));
    float milliseconds = 0;
    IMERGE_CUDA_CHECK(cudaEventElapsedTime(&milliseconds, origin_.event, mark.event));
    return static_cast<double>(milliseconds) * 1e-3;
  }

  const Mark* find(StepMark mark, size_t index) const {
    return const_cast<CudaStepEvents*>(this)->find(mark, index);
  }
  Mark* find(StepMark mark, size_t index) {
    switch (mark) {
      case StepMark::GradReady:
        return index < gradReady_.size() ? &gradReady_[index] : nullptr;
      case StepMark::BucketStart:
        return index < bucketStart_.size() ? &bucketStart_[index] : nullptr;
      case StepMark::BucketEnd:
        return index < bucketEnd_.size() ? &bucketEnd_[index] : nullptr;
      default:
        return &fixed_[static_cast<size_t>(mark)];
    }
  }

  CudaDevice& device_;
  Mark origin_;
  // ForwardStart, BackwardStart, (GradReady unused), BackwardEnd, StepEnd by enum value.
  std::array<Mark, 5> fixed_;
  std::vector<Mark> gradReady_, bucketStart_, bucketEnd_;
  std::vector<cudaEvent_t> bucketReady_;
};

}  // namespace

std::unique_ptr<DeviceStepEvents> makeDeviceStepEvents(Device& device) {
  auto* gpu = dynamic_cast<CudaDevice*>(&device);
  IMERGE_CHECK(gpu, "device step events: ", device.name(),
               " is not a CUDA device of this process (gradients on a GPU need a CudaDevice)");
  return std::make_unique<CudaStepEvents>(*gpu);
}

}  // namespace imerge::distributed
