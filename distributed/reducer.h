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
#pragma once

#include <memory>
#include <vector>

#include "autograd/variable.h"
#include "distributed/communicator.h"
#include "distributed/plan.h"
#include "distributed/priority_scheduler.h"

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
  // variable's own name.
  Reducer(std::vector<autograd::Variable> parameters, Communicator& communicator,
          std::vector<std::string> names = {});
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

  void prepareForBackward(int64_t step);
  void onGradReady(size_t parameterIndex);
  // After backward: launches what is left (all of it for `default`), waits for FIFO buckets,
  // and throws naming any parameter that received no gradient.
  void finish();

  // Priority plans: blocks until the parameter's slices have been reduced and averaged.
  void waitForParameter(size_t parameterIndex);
  // Blocks until nothing is in flight.
  void waitAll();

  // Measurements of the last backward, per parameter index: seconds from prepareForBackward()
  // to the hook, and the order the hooks fired in.
  const std::vector<double>& lastReadySeconds() const { return readySeconds_; }
  const std::vector<size_t>& lastHookOrder() const { return hookOrder_; }
  CommClock::time_point backwardStart() const { return backwardStart_; }
  // All-reduce intervals completed since the last call (bytes filled in), and the time the
  // main thread spent waiting in finish() / waitForParameter() since the last call.
  std::vector<CommInterval> takeIntervals();
  std::vector<CommInterval> takeWaits();
  // Seconds spent in the hooks and in finish() other than waiting, since the last call.
  double takeBookkeepingSeconds();

  size_t parameterCount() const { return parameters_.size(); }
  const autograd::Variable& parameter(size_t index) const { return parameters_[index]; }
  const std::vector<std::string>& parameterNames() const { return names_; }
  const Tensor& flatGradients() const { return flatGradients_; }

 private:
  void launch(size_t bucket);
  void reduceBucket(CollectiveOps& ops, size_t bucket);
  void recordWait(CommClock::time_point start);

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
  std::vector<WorkHandle> works_;  // per bucket, FIFO plans
  std::vector<double> readySeconds_;
  std::vector<size_t> hookOrder_;
  std::unique_ptr<PriorityScheduler> priority_;

  std::vector<CommInterval> intervals_, waits_;
  double bookkeepingSeconds_ = 0;
};

}  // namespace imerge::distributed
