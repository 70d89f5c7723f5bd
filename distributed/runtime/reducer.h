// Reducer: executes a Plan inside backward (PyTorch DDP's reducer, Flashlight's reducer
// interface). Owned by DataParallel; testable on its own with any Communicator.
//
// Gradients live in one flat buffer laid out in backward order, and every parameter's gradient
// is a view into it (DDP's gradient_as_bucket_view), so a bucket is a contiguous byte range and
// fusion costs no copy. As each parameter's gradient becomes final its hook calls onGradReady();
// a bucket whose tensors are all final is launched as soon as every earlier bucket has been
// (DDP's next_bucket_), so all ranks issue the same collectives in the same order whatever order
// their hooks fire in. Each bucket is averaged once, on the communication thread, right after
// its all-reduce. finish() waits and checks that every parameter received a gradient.
//
// Priority plans are sent by a PriorityScheduler instead; finish() then returns at once and
// waitForParameter() blocks until one parameter's slices are reduced.
//
// imerge-overlap plans (FIFO, overlapWithNextForward; plan.h) launch in the same order, but a
// Split bucket launches a reduce-scatter (this rank's block summed and averaged) and a
// BeforeForward bucket nothing. finish() then queues the forward phase behind the backward
// parts, in forward order (the bucket of the largest index first, as the simulator runs it):
// each Split bucket's all-gather and each BeforeForward bucket's all-reduce. It returns without
// waiting; waitForParameter() blocks until the parameter's bucket is complete (the next
// forward's pre-hooks call it), and the next prepareForBackward() waits for the rest. Every rank
// submits the same collectives in the same order, so the single communication thread keeps the
// ranks matched.
//
// Gradients on a GPU (parameters on a CudaDevice): the flat buffer lives on that GPU and the
// same plan, bookkeeping and in-order launch apply; only what a launch and finish() do differ.
// When a bucket becomes ready its hook records an event on the compute stream; the launch hands
// that event to the DeviceCommunicator, whose collective waits for it on the device and averages
// once (NCCL: ncclAvg on its own stream). finish() records the end of backward and makes the
// compute stream wait for the last bucket (collectives complete in order), so the host does not
// wait (NCCL; the MPI staging backend waits on the host for the MPI part). The optimizer and
// the next backward, queued on the compute stream, run only after the averages are in place,
// which is what makes reusing the buffer safe. Errors of collectives still in flight surface at
// the next finish(), prepareForBackward() or waitAll(). Device times come from CUDA events
// (device_step_events.h): each hook records one during profiled steps, read after the step.
// imerge-overlap plans run the same halves through the DeviceCommunicator; finish() queues the
// forward phase on the device and joins nothing, waitForParameter() makes the compute stream
// (not the host) wait for the parameter's bucket, and prepareForBackward() for the rest.
// The `priority` strategy with more than one rank is refused on a GPU (setPlan says why).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "autograd/variable.h"
#include "distributed/comm/communicator.h"
#include "distributed/comm/device_communicator.h"
#include "distributed/planning/plan.h"
#include "distributed/runtime/comm_timer.h"
#include "distributed/runtime/device_step_events.h"
#include "distributed/runtime/device_step_times.h"
#include "distributed/runtime/priority_scheduler.h"

namespace imerge::distributed {

// The planner's view of `parameters` (called `names`) taken in `order` (indices into
// parameters), with backward times from `readySeconds` (per parameter index, seconds from the
// start of backward): each tensor's time is its ready time less the latest earlier one, never
// negative.
std::vector<TensorInfo> tensorInfosInOrder(const std::vector<autograd::Variable>& parameters,
                                           const std::vector<std::string>& names,
                                           const std::vector<size_t>& order,
                                           const std::vector<double>& readySeconds);

class Reducer {
 public:
  // `parameters` in registration order (the optimizer's order); hooks are installed on each.
  // `names` (dotted paths, "layer1.0.conv1.weight") are what messages call them; empty: each
  // variable's own name. All parameters must live on one device. On a GPU the communicator must
  // be a DeviceCommunicator of that GPU, or have a world of one (nothing to exchange);
  // `deviceEvents` are the CUDA events to use (null: made for the parameters' GPU; tests pass
  // fakes).
  Reducer(std::vector<autograd::Variable> parameters, Communicator& communicator,
          std::vector<std::string> names = {},
          std::unique_ptr<DeviceStepEvents> deviceEvents = nullptr);
  ~Reducer();
  Reducer(const Reducer&) = delete;
  Reducer& operator=(const Reducer&) = delete;

  // Installs a plan over tensors in `backwardOrder` (backwardOrder[k] = the parameter index of
  // tensor k): lays the flat gradient buffer out in that order and points every parameter's
  // gradient into it. Only between steps, with nothing in flight.
  void setPlan(Plan plan, std::vector<size_t> backwardOrder);
  const Plan& plan() const { return plan_; }
  const std::vector<size_t>& backwardOrder() const { return backwardOrder_; }
  // The planner's view of the parameters in the current backward order, with the backward
  // times of the last backward.
  std::vector<TensorInfo> tensorInfos() const;

  // Starts a step. `profile`: measure each gradient's ready time (always done on the host,
  // where the hooks' clock is the truth; on a GPU it costs an event per hook and a wait for
  // backward when the times are read).
  void prepareForBackward(int64_t step, bool profile = true);
  void onGradReady(size_t parameterIndex);
  // After backward: launches what is left (all of it for `default`), waits for FIFO buckets,
  // and throws naming any parameter that received no gradient.
  void finish();

  // Plans that overlap the next forward (priority, imerge-overlap): blocks until the
  // parameter's buckets have been reduced and averaged; at once for every other plan.
  void waitForParameter(size_t parameterIndex);
  // Blocks until nothing is in flight.
  void waitAll();

  // Measurements of the last backward, per parameter index: seconds from prepareForBackward()
  // to the hook (on a GPU: from the device's start of backward to when the device had computed
  // the gradient), and the order the hooks fired in. Valid when collectReadySeconds() says so.
  const std::vector<double>& lastReadySeconds() const { return readySeconds_; }
  // Whether the last backward's ready times were measured: always on the host; on a GPU when
  // it was profiled, after reading its events (which waits until the device ran backward).
  bool collectReadySeconds();
  const std::vector<size_t>& lastHookOrder() const { return hookOrder_; }
  CommClock::time_point backwardStart() const { return backwardStart_; }
  // Reports each completed all-reduce (host gradients only: on a GPU these are device times,
  // from readDeviceStepTimes()), each wait of the training thread in finish(),
  // waitForParameter() and waitAll(), and the hooks' and finish()'s own time to `timer`
  // (comm_timer.h; null, the default: nothing is timed). It must outlive the Reducer.
  void setTimer(CommTimer* timer) { timer_ = timer; }

  // Gradients on a GPU: the events of the step, and the marks that bracket it (no-ops on the
  // host). markForwardStart() begins a step's marks (DataParallel::forward); without it
  // prepareForBackward() does.
  bool onDevice() const { return deviceEvents_ != nullptr; }
  void markForwardStart();
  void markStepEnd();
  // The device times of the last step's marks and launched collectives, waiting for them to
  // complete; empty on the host.
  DeviceStepTimes readDeviceStepTimes();

  size_t parameterCount() const { return parameters_.size(); }
  const autograd::Variable& parameter(size_t index) const { return parameters_[index]; }
  const std::vector<std::string>& parameterNames() const { return names_; }
  const Tensor& flatGradients() const { return flatGradients_; }

 private:
  std::string bucketLabel(size_t bucket) const;
  // A bucket's part during backward (its all-reduce, a Split bucket's reduce-scatter, nothing
  // for BeforeForward), then the forward phase's collectives (sets forwardPhaseInFlight_).
  void launch(size_t bucket);
  void launchForwardPhase();
  // `kind` of `bucket` through the host communicator or the device one.
  WorkHandle launchCollective(size_t bucket, CollectiveKind kind);
  std::string collectiveLabel(size_t bucket, CollectiveKind kind) const;
  // Queues `kind` of `bucket` on the communication thread, which reports its interval.
  WorkHandle submitCollective(size_t bucket, CollectiveKind kind, std::string label);
  // On the communication thread: `kind` of `bucket`, averaged (averageCollective).
  void averageBucket(CollectiveOps& ops, size_t bucket, CollectiveKind kind);
  void recordWait(CommClock::time_point start);
  void reportBookkeeping(CommClock::time_point start);
  void setUpDevice(std::unique_ptr<DeviceStepEvents> events);
  WorkHandle launchOnDevice(size_t bucket, CollectiveKind kind, std::string label);
  void finishOnDevice();
  // Rethrows the error of any device collective of earlier steps that has completed with one,
  // and forgets the completed ones.
  void checkDeviceWorks();

  std::vector<autograd::Variable> parameters_;
  std::vector<std::string> names_;
  std::vector<autograd::HookHandle> hooks_;
  Communicator& communicator_;

  Plan plan_;
  std::vector<size_t> backwardOrder_;
  std::vector<size_t> positionOf_;              // parameter index -> position in backward order
  std::vector<int64_t> tensorOffset_;           // position -> element offset in flatGradients_
  std::vector<std::vector<size_t>> bucketsOf_;  // position -> buckets that hold it
  std::vector<int64_t> bucketOffset_, bucketElements_;
  Tensor flatGradients_;  // float32 [sum of parameter elements], backward order

  // Per backward.
  int64_t step_ = 0;
  CommClock::time_point backwardStart_;
  std::vector<int> pending_;    // per bucket: tensors not final yet
  std::vector<uint8_t> ready_;  // per position
  size_t nextToLaunch_ = 0;
  std::vector<WorkHandle> works_;           // per bucket, FIFO plans: what completes it
  std::vector<WorkHandle> reduceScatters_;  // per bucket: a Split bucket's first half
  bool forwardPhaseInFlight_ = false;       // imerge-overlap: finish() returned, works run on
  std::vector<double> readySeconds_;
  std::vector<size_t> hookOrder_;
  std::unique_ptr<PriorityScheduler> priority_;

  CommTimer* timer_ = nullptr;

  // Gradients on a GPU (deviceEvents_ set).
  std::unique_ptr<DeviceStepEvents> deviceEvents_;
  DeviceCommunicator* deviceCommunicator_ = nullptr;  // null: a world of one, nothing to exchange
  std::vector<DeviceSync> deviceSyncs_;               // per bucket, this step's
  std::vector<WorkHandle> deviceInFlight_;            // launched, in launch order, not yet seen
                                                      // complete (checkDeviceWorks)
  std::vector<DeviceBucketTimes> deviceLaunched_;     // this step's launches (times filled later)
  bool profiling_ = true;
  bool readyCollected_ = false;
};

}  // namespace imerge::distributed
