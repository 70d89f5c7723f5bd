// The Reducer's bookkeeping (the design is in the header). Host and device gradients share
// everything up to a bucket's launch; launch(), finish() and the timing read differ.
#include "distributed/runtime/reducer.h"

#include <algorithm>
#include <exception>
#include <optional>
#include <utility>

#include "core/error.h"

namespace imerge::distributed {

namespace {
double secondsBetween(CommClock::time_point start, CommClock::time_point end) {
  return std::chrono::duration<double>(end - start).count();
}
}  // namespace

Reducer::Reducer(std::vector<autograd::Variable> parameters, Communicator& communicator,
                 std::vector<std::string> names, std::unique_ptr<DeviceStepEvents> deviceEvents)
    : parameters_(std::move(parameters)), names_(std::move(names)), communicator_(communicator) {
  IMERGE_CHECK(!parameters_.empty(), "Reducer: the model has no parameters to reduce");
  if (names_.empty()) {
    for (const autograd::Variable& parameter : parameters_) names_.push_back(parameter.name());
  }
  IMERGE_CHECK(names_.size() == parameters_.size(), "Reducer: ", names_.size(), " names for ",
               parameters_.size(), " parameters");
  const Device& device = parameters_.front().tensor().device();
  for (size_t index = 0; index < parameters_.size(); ++index) {
    const autograd::Variable& parameter = parameters_[index];
    IMERGE_CHECK(parameter.requiresGrad() && parameter.tensor().dtype() == DType::Float32,
                 "Reducer: parameter '", names_[index], "' ", parameter.tensor().describe(),
                 " must be a float32 tensor that requires grad");
    IMERGE_CHECK(&parameter.tensor().device() == &device, "Reducer: parameter '", names_[index],
                 "' is on ", parameter.tensor().device().name(), " but '", names_.front(),
                 "' is on ", device.name(),
                 "; the gradients share one flat buffer on one device. Move the whole model with "
                 "Module::to(device) before building DataParallel");
  }
  if (device.type() != DeviceType::CPU) setUpDevice(std::move(deviceEvents));
  // Hooks last: nothing above may throw with `this` captured in them.
  for (size_t index = 0; index < parameters_.size(); ++index) {
    hooks_.push_back(
        parameters_[index].addGradHook([this, index](autograd::Variable&) { onGradReady(index); }));
  }
  readySeconds_.assign(parameters_.size(), 0.0);
}

void Reducer::setUpDevice(std::unique_ptr<DeviceStepEvents> events) {
  Device& device = parameters_.front().tensor().device();
  deviceCommunicator_ = dynamic_cast<DeviceCommunicator*>(&communicator_);
  if (!deviceCommunicator_) {
    IMERGE_CHECK(communicator_.size() == 1, "Reducer: the parameters are on ", device.name(),
                 " but the '", communicator_.backendName(),
                 "' communicator all-reduces host buffers among ", communicator_.size(),
                 " ranks. Gradients on a GPU need a device communicator: NCCL "
                 "(makeNcclCommunicator; imerge-train --dist-backend nccl) or MPI through host "
                 "copies (makeStagingCommunicator; --dist-backend mpi)");
  } else {
    const Device& theirs = deviceCommunicator_->bufferDevice();
    IMERGE_CHECK(&theirs == &device, "Reducer: the parameters are on ", device.name(), " but the '",
                 communicator_.backendName(), "' communicator of rank ", communicator_.rank(),
                 " reduces buffers on ", theirs.name(),
                 "; put the model on the communicator's GPU (Module::to) before building "
                 "DataParallel");
  }
  deviceEvents_ = events ? std::move(events) : makeDeviceStepEvents(device);
  IMERGE_CHECK(&deviceEvents_->device() == &device, "Reducer: the device events are on ",
               deviceEvents_->device().name(), ", the parameters on ", device.name());
  deviceEvents_->reserve(parameters_.size(), 0);
}

Reducer::~Reducer() {
  try {
    waitAll();
  } catch (...) {
    // The error was or will be reported by whoever waited; a destructor must not throw.
  }
  for (size_t index = 0; index < parameters_.size(); ++index) {
    parameters_[index].removeGradHook(hooks_[index]);
  }
}

void Reducer::setPlan(Plan plan, std::vector<size_t> backwardOrder) {
  IMERGE_CHECK(works_.empty() && !forwardPhaseInFlight_ && deviceInFlight_.empty() &&
                   (!priority_ || !priority_->running()),
               "Reducer::setPlan: called while all-reduces are in flight (waitAll() first)");
  const size_t count = parameters_.size();
  IMERGE_CHECK(backwardOrder.size() == count, "Reducer::setPlan: the backward order lists ",
               backwardOrder.size(), " tensors, the model has ", count);
  std::vector<size_t> positionOf(count, count);
  for (size_t position = 0; position < count; ++position) {
    const size_t index = backwardOrder[position];
    IMERGE_CHECK(index < count && positionOf[index] == count, "Reducer::setPlan: backward order ",
                 "is not a permutation of the ", count, " parameters (entry ", position, " is ",
                 index, ")");
    positionOf[index] = position;
  }
  validatePlan(plan, tensorInfosInOrder(parameters_, names_, backwardOrder,
                                        std::vector<double>(count, 0.0)));
  Device& device = parameters_.front().tensor().device();
  IMERGE_CHECK(
      !(plan.order == LaunchOrder::Priority && deviceEvents_ && communicator_.size() > 1),
      "Reducer: the 'priority' strategy cannot reduce gradients on ", device.name(), " among ",
      communicator_.size(),
      " ranks. Its order of slices is agreed from the slices ready on every rank, and "
      "on a GPU a hook fires when backward has queued a gradient, not when the device "
      "has computed it: the agreed order (lowest layer first) would queue the all-reduce "
      "of the layer the device computes last ahead of every other slice and hold them "
      "all until backward ends. Doing it right needs the scheduler to poll each slice's "
      "CUDA event, which is not implemented. Use --dist mgwfbp, imerge, ddp, fusion or wfbp "
      "on GPUs (priority runs on the CPU)");

  // The flat buffer in backward order; each parameter's gradient becomes a view of it.
  tensorOffset_.assign(count, 0);
  int64_t elements = 0;
  for (size_t position = 0; position < count; ++position) {
    tensorOffset_[position] = elements;
    elements += parameters_[backwardOrder[position]].numel();
  }
  flatGradients_ = Tensor::zeros({elements}, DType::Float32, device);
  for (size_t position = 0; position < count; ++position) {
    autograd::Variable& parameter = parameters_[backwardOrder[position]];
    parameter.setGradBuffer(flatGradients_.flatView(tensorOffset_[position], parameter.shape()));
  }

  const size_t buckets = plan.buckets.size();
  bucketsOf_.assign(count, {});
  bucketOffset_.assign(buckets, 0);
  bucketElements_.assign(buckets, 0);
  std::vector<int> priorities(buckets);
  for (size_t b = 0; b < buckets; ++b) {
    const Bucket& bucket = plan.buckets[b];
    for (size_t position : bucket.tensors) bucketsOf_[position].push_back(b);
    bucketOffset_[b] = tensorOffset_[bucket.tensors.front()] +
                       static_cast<int64_t>(bucket.sliceOffsetBytes / sizeof(float));
    bucketElements_[b] = static_cast<int64_t>(bucket.bytes / sizeof(float));
    priorities[b] = bucket.priority;
  }
  priority_.reset();
  // In a world of one there is nothing to agree on or wait for (and the communicator runs tasks
  // inline, where the scheduler's task would wait for hooks that cannot fire): the slices go
  // through the FIFO path, whose all-reduce is then the identity.
  if (plan.order == LaunchOrder::Priority && communicator_.size() > 1) {
    priority_ = std::make_unique<PriorityScheduler>(
        std::move(priorities), [this](CollectiveOps& ops, size_t b) {
          const auto start = CommClock::now();
          averageBucket(ops, b, CollectiveKind::AllReduce);
          if (timer_) timer_->collectiveDone({start, CommClock::now(), b, plan_.buckets[b].bytes});
        });
  }
  plan_ = std::move(plan);
  backwardOrder_ = std::move(backwardOrder);
  positionOf_ = std::move(positionOf);
  pending_.assign(buckets, 0);
  ready_.assign(count, 0);
  if (deviceEvents_) {
    deviceEvents_->reserve(count, buckets);
    deviceSyncs_.assign(buckets, {});
  }
}

std::vector<TensorInfo> tensorInfosInOrder(const std::vector<autograd::Variable>& parameters,
                                           const std::vector<std::string>& names,
                                           const std::vector<size_t>& order,
                                           const std::vector<double>& readySeconds) {
  std::vector<TensorInfo> infos;
  double previous = 0;
  for (size_t index : order) {
    const double ready = readySeconds[index];
    infos.push_back(
        {names[index], parameters[index].tensor().bytes(), std::max(0.0, ready - previous)});
    previous = std::max(previous, ready);
  }
  return infos;
}

std::vector<TensorInfo> Reducer::tensorInfos() const {
  return tensorInfosInOrder(parameters_, names_, backwardOrder_, readySeconds_);
}

void Reducer::prepareForBackward(int64_t step, bool profile) {
  IMERGE_CHECK(!backwardOrder_.empty(), "Reducer: no plan installed (call setPlan first)");
  if (forwardPhaseInFlight_ && deviceEvents_) {
    // On a GPU the compute stream waits for the forward phase instead of the host: collectives
    // complete in launch order, so the last one launched covers the rest.
    if (deviceCommunicator_ && !deviceInFlight_.empty()) {
      deviceCommunicator_->waitOnStream(deviceInFlight_.back(), deviceEvents_->computeStream());
    }
    works_.clear();
    reduceScatters_.clear();
    forwardPhaseInFlight_ = false;
  } else if (forwardPhaseInFlight_) {
    // What the next forward's pre-hooks did not wait for (or all of it, without them).
    const auto waitStart = CommClock::now();
    waitAll();
    recordWait(waitStart);
  }
  IMERGE_CHECK(works_.empty(), "Reducer: step ", step, " began before step ", step_,
               " finished (call finish() after every backward)");
  if (deviceEvents_) checkDeviceWorks();  // an earlier step's collective may have failed since
  if (priority_) {
    const auto waitStart = CommClock::now();
    priority_->waitAll();
    recordWait(waitStart);
  }
  step_ = step;
  for (size_t b = 0; b < plan_.buckets.size(); ++b) {
    pending_[b] = static_cast<int>(plan_.buckets[b].tensors.size());
  }
  std::fill(ready_.begin(), ready_.end(), 0);
  hookOrder_.clear();
  nextToLaunch_ = 0;
  works_.assign(plan_.buckets.size(), nullptr);
  reduceScatters_.assign(plan_.buckets.size(), nullptr);
  if (priority_) {
    works_.clear();
    priority_->start(communicator_, step);
  }
  if (deviceEvents_) {
    // Without markForwardStart() since the last backward, this backward begins the step.
    if (deviceEvents_->recorded(StepMark::BackwardStart)) deviceEvents_->beginStep();
    deviceEvents_->mark(StepMark::BackwardStart);
    deviceLaunched_.clear();
    std::fill(deviceSyncs_.begin(), deviceSyncs_.end(), DeviceSync{});
    profiling_ = profile;
    readyCollected_ = false;
  }
  backwardStart_ = CommClock::now();
}

void Reducer::onGradReady(size_t parameterIndex) {
  const auto start = CommClock::now();
  const size_t position = positionOf_[parameterIndex];
  const autograd::Variable& parameter = parameters_[parameterIndex];
  IMERGE_CHECK(!ready_[position], "Reducer: the gradient of '", names_[parameterIndex],
               "' became final twice in step ", step_,
               "; call backward once per step (DataParallel::backward), or prepareForBackward "
               "between backward passes");
  IMERGE_CHECK(parameter.grad().sharesStorageWith(flatGradients_), "Reducer: the gradient of '",
               names_[parameterIndex],
               "' is not in its bucket; was setGradBuffer called on it after "
               "the Reducer was built?");
  ready_[position] = 1;
  readySeconds_[parameterIndex] = secondsBetween(backwardStart_, start);
  hookOrder_.push_back(parameterIndex);
  // On a GPU the hook fires when backward has queued the gradient; the event says when the
  // device has computed it.
  if (deviceEvents_ && profiling_) deviceEvents_->mark(StepMark::GradReady, parameterIndex);
  for (size_t b : bucketsOf_[position]) {
    if (--pending_[b] > 0) continue;
    // The bucket's collective will wait on the device for exactly the work queued so far.
    if (deviceCommunicator_) deviceSyncs_[b] = deviceEvents_->bucketReady(b);
    if (priority_) priority_->markReady(b);
  }
  if (!priority_ && !plan_.startAfterBackward) {
    while (nextToLaunch_ < plan_.buckets.size() && pending_[nextToLaunch_] == 0) {
      launch(nextToLaunch_++);
    }
  }
  reportBookkeeping(start);
}

std::string Reducer::bucketLabel(size_t bucket) const {
  const Bucket& planned = plan_.buckets[bucket];
  return "bucket " + std::to_string(bucket) + " of step " + std::to_string(step_) + " ('" +
         names_[backwardOrder_[planned.tensors.front()]] + "'" +
         (planned.tensors.size() > 1
              ? " and " + std::to_string(planned.tensors.size() - 1) + " more"
              : std::string()) +
         ", " + std::to_string(planned.bytes) + " bytes)";
}

void Reducer::launch(size_t bucket) {
  switch (plan_.buckets[bucket].schedule) {
    case Bucket::Schedule::Backward:
      works_[bucket] = launchCollective(bucket, CollectiveKind::AllReduce);
      break;
    case Bucket::Schedule::Split:
      reduceScatters_[bucket] = launchCollective(bucket, CollectiveKind::ReduceScatter);
      break;
    case Bucket::Schedule::BeforeForward:
      break;  // its all-reduce waits for launchForwardPhase()
  }
}

void Reducer::launchForwardPhase() {
  // The same order as the simulator's (plan.h): after every bucket's backward part, in forward
  // order, so the first layer's all-gather is the first the next forward needs.
  for (size_t bucket = plan_.buckets.size(); bucket-- > 0;) {
    switch (plan_.buckets[bucket].schedule) {
      case Bucket::Schedule::Backward:
        break;
      case Bucket::Schedule::Split:
        works_[bucket] = launchCollective(bucket, CollectiveKind::AllGather);
        break;
      case Bucket::Schedule::BeforeForward:
        works_[bucket] = launchCollective(bucket, CollectiveKind::AllReduce);
        break;
    }
  }
  forwardPhaseInFlight_ = true;
}

WorkHandle Reducer::launchCollective(size_t bucket, CollectiveKind kind) {
  std::string label = collectiveLabel(bucket, kind);
  return deviceEvents_ ? launchOnDevice(bucket, kind, std::move(label))
                       : submitCollective(bucket, kind, std::move(label));
}

std::string Reducer::collectiveLabel(size_t bucket, CollectiveKind kind) const {
  static constexpr const char* kPrefix[] = {"", "reduce-scatter, ", "all-gather, "};
  return kPrefix[static_cast<int>(kind)] + bucketLabel(bucket);
}

WorkHandle Reducer::submitCollective(size_t bucket, CollectiveKind kind, std::string label) {
  return communicator_.submit(std::move(label), [this, bucket, kind](CollectiveOps& ops) {
    const auto start = CommClock::now();
    averageBucket(ops, bucket, kind);
    if (timer_) {
      timer_->collectiveDone({start, CommClock::now(), bucket, plan_.buckets[bucket].bytes, kind});
    }
  });
}

WorkHandle Reducer::launchOnDevice(size_t bucket, CollectiveKind kind, std::string label) {
  if (!deviceCommunicator_) {
    // A world of one without device collectives: the sum over one rank is the gradient itself.
    auto work = std::make_shared<Work>(std::move(label));
    work->markStarted();
    work->markFinished(nullptr);
    return work;
  }
  IMERGE_CHECK(deviceSyncs_[bucket].ready, "Reducer: bucket ", bucket, " of step ", step_,
               " was launched before its ready event was recorded");
  // The bucket's timing marks bracket its collective in backward (its all-reduce or its
  // reduce-scatter); one launched for the next forward runs unmarked, so the step's device
  // figures cover backward's communication only (device_step_times.h).
  DeviceSync sync = deviceSyncs_[bucket];
  const bool inBackward = kind != CollectiveKind::AllGather &&
                          plan_.buckets[bucket].schedule != Bucket::Schedule::BeforeForward;
  if (inBackward) {
    deviceLaunched_.push_back({bucket, plan_.buckets[bucket].bytes, 0.0, 0.0});
  } else {
    sync.started = sync.finished = nullptr;
  }
  float* data = flatGradients_.data<float>() + bucketOffset_[bucket];  // a device pointer
  WorkHandle work = deviceCommunicator_->collectiveAsync(
      kind, data, static_cast<size_t>(bucketElements_[bucket]), sync, std::move(label));
  deviceInFlight_.push_back(work);
  return work;
}

void Reducer::averageBucket(CollectiveOps& ops, size_t bucket, CollectiveKind kind) {
  averageCollective(ops, kind, flatGradients_.data<float>() + bucketOffset_[bucket],
                    static_cast<size_t>(bucketElements_[bucket]), communicator_.rank(),
                    communicator_.size());
}

void Reducer::finish() {
  auto start = CommClock::now();
  std::vector<std::string> missing;
  for (size_t position = 0; position < ready_.size(); ++position) {
    if (!ready_[position]) missing.push_back(names_[backwardOrder_[position]]);
  }
  if (!missing.empty()) {
    std::string names;
    for (size_t i = 0; i < missing.size() && i < 8; ++i)
      names += (i ? ", '" : "'") + missing[i] + "'";
    if (missing.size() > 8) names += " and " + std::to_string(missing.size() - 8) + " more";
    IMERGE_FAIL("Reducer: ", missing.size(), " parameter(s) received no gradient in step ", step_,
                ": ", names,
                ". Every parameter must take part in the loss on every rank, or the ranks' "
                "all-reduces would not match. Possible causes: a layer that forward() skipped, a "
                "parameter detached from the graph, or a backward that was not called through "
                "DataParallel::backward. Freeze parameters that should not train with "
                "setRequiresGrad(false) before building DataParallel.");
  }
  if (priority_) {
    reportBookkeeping(start);
    return;
  }
  while (nextToLaunch_ < plan_.buckets.size()) launch(nextToLaunch_++);
  if (deviceEvents_) {
    finishOnDevice();
    reportBookkeeping(start);
    return;
  }
  if (plan_.overlapWithNextForward) {
    // imerge-overlap: nothing is waited for here; each layer's next forward waits for its
    // own bucket (waitForParameter), the next backward for the rest.
    launchForwardPhase();
    reportBookkeeping(start);
    return;
  }
  reportBookkeeping(start);

  // Tasks finish in submission order, so once the last bucket is done all are: one sleep and
  // wake-up instead of one per bucket (about 2 us each). wait() also rethrows a failure of its
  // own task, so each is still waited for.
  if (!works_.empty()) {
    const auto waitStart = CommClock::now();
    works_.back()->wait();
    recordWait(waitStart);
  }
  for (const WorkHandle& work : works_) work->wait();
  works_.clear();
}

void Reducer::finishOnDevice() {
  deviceEvents_->mark(StepMark::BackwardEnd);
  if (plan_.overlapWithNextForward) {
    // imerge-overlap: the forward phase queues behind backward's collectives on the device;
    // each layer's next forward makes the compute stream wait for its own bucket
    // (waitForParameter), the next backward for the rest (prepareForBackward).
    launchForwardPhase();
  } else {
    works_.clear();
    // Collectives complete in launch order, so the compute stream waits for the last one only;
    // the optimizer and the next backward queue behind it. No host wait (NCCL).
    if (deviceCommunicator_ && !deviceInFlight_.empty()) {
      deviceCommunicator_->waitOnStream(deviceInFlight_.back(), deviceEvents_->computeStream());
    }
  }
  checkDeviceWorks();
}

void Reducer::checkDeviceWorks() {
  std::vector<WorkHandle> pending;
  for (const WorkHandle& work : deviceInFlight_) {
    if (!work->completed()) {
      pending.push_back(work);
    } else {
      work->wait();  // returns at once; rethrows the collective's error
    }
  }
  deviceInFlight_ = std::move(pending);
}

void Reducer::markForwardStart() {
  if (!deviceEvents_) return;
  deviceEvents_->beginStep();
  deviceEvents_->mark(StepMark::ForwardStart);
}

void Reducer::markStepEnd() {
  if (deviceEvents_) deviceEvents_->mark(StepMark::StepEnd);
}

bool Reducer::collectReadySeconds() {
  if (!deviceEvents_) return true;
  if (!profiling_) return false;
  if (readyCollected_) return true;
  for (size_t index = 0; index < parameters_.size(); ++index) {
    const std::optional<double> ready =
        deviceEvents_->secondsFromBackwardStart(StepMark::GradReady, index);
    if (!ready) return false;  // a backward that did not reach every parameter
    readySeconds_[index] = std::max(0.0, *ready);
  }
  readyCollected_ = true;
  return true;
}

DeviceStepTimes Reducer::readDeviceStepTimes() {
  DeviceStepTimes times;
  if (!deviceEvents_) return times;
  times.forwardStart = deviceEvents_->secondsFromBackwardStart(StepMark::ForwardStart);
  times.backwardEnd = deviceEvents_->secondsFromBackwardStart(StepMark::BackwardEnd);
  times.stepEnd = deviceEvents_->secondsFromBackwardStart(StepMark::StepEnd);
  times.joinedAtBackwardEnd = !plan_.overlapWithNextForward;
  for (DeviceBucketTimes launched : deviceLaunched_) {
    const auto start =
        deviceEvents_->secondsFromBackwardStart(StepMark::BucketStart, launched.bucket);
    const auto end = deviceEvents_->secondsFromBackwardStart(StepMark::BucketEnd, launched.bucket);
    if (!start || !end) continue;
    launched.start = *start;
    launched.end = *end;
    times.buckets.push_back(launched);
  }
  return times;
}

void Reducer::waitForParameter(size_t parameterIndex) {
  if (forwardPhaseInFlight_ && deviceEvents_) {
    // The compute stream, where the parameter's update and its layer's forward are queued,
    // waits on the device (NCCL) for the bucket; a world of one has nothing in flight.
    if (!deviceCommunicator_) return;
    for (size_t b : bucketsOf_[positionOf_[parameterIndex]]) {
      if (works_[b]) deviceCommunicator_->waitOnStream(works_[b], deviceEvents_->computeStream());
    }
    return;
  }
  if (forwardPhaseInFlight_) {
    const auto waitStart = CommClock::now();
    for (size_t b : bucketsOf_[positionOf_[parameterIndex]]) {
      if (works_[b]) works_[b]->wait();
    }
    recordWait(waitStart);
    return;
  }
  if (!priority_ || !priority_->running()) return;
  const auto waitStart = CommClock::now();
  priority_->waitFor(bucketsOf_[positionOf_[parameterIndex]]);
  recordWait(waitStart);
}

void Reducer::waitAll() {
  // Every collective is waited for even after one failed: none may still use the buffer when
  // the caller goes on to free or replace it.
  std::exception_ptr firstError;
  for (std::vector<WorkHandle>* works : {&reduceScatters_, &works_, &deviceInFlight_}) {
    for (WorkHandle& work : *works) {
      try {
        if (work) work->wait();
      } catch (...) {
        if (!firstError) firstError = std::current_exception();
      }
    }
    works->clear();
  }
  forwardPhaseInFlight_ = false;
  if (firstError) std::rethrow_exception(firstError);
  if (priority_) {
    const auto waitStart = CommClock::now();
    priority_->waitAll();
    recordWait(waitStart);
  }
}

void Reducer::recordWait(CommClock::time_point start) {
  if (timer_) timer_->waited(start, CommClock::now());
}

void Reducer::reportBookkeeping(CommClock::time_point start) {
  if (timer_) timer_->bookkeeping(secondsBetween(start, CommClock::now()));
}

}  // namespace imerge::distributed
