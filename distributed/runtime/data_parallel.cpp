#include "distributed/runtime/data_parallel.h"

#include <algorithm>
#include <bit>
#include <sstream>
#include <unordered_map>
#include <utility>

#include "core/error.h"
#include "distributed/comm/device_communicator.h"
#include "distributed/runtime/comm_measurement.h"
#include "distributed/runtime/device_step_times.h"

namespace imerge::distributed {

namespace {
double secondsBetween(CommClock::time_point start, CommClock::time_point end) {
  return std::chrono::duration<double>(end - start).count();
}

double overlapSeconds(const CommInterval& a, const CommInterval& b) {
  const auto start = std::max(a.start, b.start);
  const auto end = std::min(a.end, b.end);
  return end > start ? secondsBetween(start, end) : 0.0;
}

std::string shapeText(const Tensor& tensor) {
  return tensor.describe();
}

// Plans travel between ranks as int64 arrays:
// [order, startAfterBackward, overlapWithNextForward, optimalityGapSeconds (the double's bits),
//  L, backwardOrder..., B,
//  per bucket: tensor count, tensors..., bytes, priority, sliceOffsetBytes, schedule].
std::vector<int64_t> encodePlan(const Plan& plan, const std::vector<size_t>& order) {
  std::vector<int64_t> out = {
      static_cast<int64_t>(plan.order), plan.startAfterBackward, plan.overlapWithNextForward,
      std::bit_cast<int64_t>(plan.optimalityGapSeconds), static_cast<int64_t>(order.size())};
  for (size_t index : order) out.push_back(static_cast<int64_t>(index));
  out.push_back(static_cast<int64_t>(plan.buckets.size()));
  for (const Bucket& bucket : plan.buckets) {
    out.push_back(static_cast<int64_t>(bucket.tensors.size()));
    for (size_t tensor : bucket.tensors) out.push_back(static_cast<int64_t>(tensor));
    out.push_back(static_cast<int64_t>(bucket.bytes));
    out.push_back(bucket.priority);
    out.push_back(static_cast<int64_t>(bucket.sliceOffsetBytes));
    out.push_back(static_cast<int64_t>(bucket.schedule));
  }
  return out;
}

void decodePlan(const std::vector<int64_t>& in, Plan& plan, std::vector<size_t>& order) {
  size_t at = 0;
  auto next = [&]() {
    IMERGE_CHECK(at < in.size(), "DataParallel: the plan received from rank 0 is truncated");
    return in[at++];
  };
  plan = Plan{};
  plan.order = static_cast<LaunchOrder>(next());
  plan.startAfterBackward = next() != 0;
  plan.overlapWithNextForward = next() != 0;
  plan.optimalityGapSeconds = std::bit_cast<double>(next());
  order.assign(static_cast<size_t>(next()), 0);
  for (size_t& index : order) index = static_cast<size_t>(next());
  plan.buckets.resize(static_cast<size_t>(next()));
  for (Bucket& bucket : plan.buckets) {
    bucket.tensors.resize(static_cast<size_t>(next()));
    for (size_t& tensor : bucket.tensors) tensor = static_cast<size_t>(next());
    bucket.bytes = static_cast<size_t>(next());
    bucket.priority = static_cast<int>(next());
    bucket.sliceOffsetBytes = static_cast<size_t>(next());
    bucket.schedule = static_cast<Bucket::Schedule>(next());
  }
}

// A model that charges nothing: the strategies that plan from sizes alone never ask it.
class NoCostModel final : public CommModel {
 public:
  double seconds(size_t, int) const override { return 0.0; }
  std::string describe() const override { return "not used by this strategy"; }
  std::vector<CommPiece> piecesAt(int) const override { return {{0, 0.0, 0.0}}; }
};

double meanOf(const std::deque<double>& values) {
  if (values.empty()) return 0.0;
  double total = 0;
  for (double value : values) total += value;
  return total / static_cast<double>(values.size());
}

// Per parameter, the median over steps of its ready time.
std::vector<double> medianPerParameter(const std::deque<std::vector<double>>& steps,
                                       size_t parameters) {
  std::vector<double> medians(parameters, 0.0);
  if (steps.empty()) return medians;
  std::vector<double> values;
  for (size_t index = 0; index < parameters; ++index) {
    values.clear();
    for (const auto& step : steps) values.push_back(step[index]);
    std::nth_element(values.begin(), values.begin() + values.size() / 2, values.end());
    medians[index] = values[values.size() / 2];
  }
  return medians;
}
}  // namespace

void takeLatestOverRanks(std::deque<double>& forwardSeconds,
                         std::deque<std::vector<double>>& readySeconds, Communicator& ranks) {
  const size_t steps = forwardSeconds.size();
  const size_t parameters = readySeconds.empty() ? 0 : readySeconds.front().size();
  IMERGE_CHECK(readySeconds.size() == steps, "takeLatestOverRanks: ", steps, " forward times but ",
               readySeconds.size(), " steps of ready times");
  // Every rank learns the largest and smallest counts, so that all refuse a mismatch together
  // instead of some waiting in a collective of a different length.
  int64_t counts[4] = {static_cast<int64_t>(steps), -static_cast<int64_t>(steps),
                       static_cast<int64_t>(parameters), -static_cast<int64_t>(parameters)};
  ranks.allreduceMax(counts, 4);
  IMERGE_CHECK(counts[0] == -counts[1] && counts[2] == -counts[3],
               "takeLatestOverRanks: the ranks profiled between ", -counts[1], " and ", counts[0],
               " steps of between ", -counts[3], " and ", counts[2],
               " parameters; every rank must profile the same steps of the same model");
  // Per step: [forward, forward + ready of each parameter].
  std::vector<double> fromStart(steps * (parameters + 1));
  for (size_t step = 0; step < steps; ++step) {
    double* row = &fromStart[step * (parameters + 1)];
    row[0] = forwardSeconds[step];
    for (size_t index = 0; index < parameters; ++index)
      row[index + 1] = forwardSeconds[step] + readySeconds[step][index];
  }
  ranks.allreduceMax(fromStart.data(), fromStart.size());
  for (size_t step = 0; step < steps; ++step) {
    const double* row = &fromStart[step * (parameters + 1)];
    forwardSeconds[step] = row[0];
    for (size_t index = 0; index < parameters; ++index)
      readySeconds[step][index] = row[index + 1] - row[0];
  }
}

bool profilesStepOnDevice(int64_t step, int64_t warmupSteps, int64_t replanEverySteps,
                          bool usesTimings) {
  if (step < warmupSteps) return true;
  if (!usesTimings || replanEverySteps < 1) return false;
  // afterStep() keeps the last `keep` profiled steps and checks for drift once step + 1 is
  // warmupSteps plus a multiple of replanEverySteps; those `keep` steps must be measured.
  const int64_t keep = std::max<int64_t>(1, std::min<int64_t>(warmupSteps, 5));
  const int64_t sinceWarmup = step + 1 - warmupSteps;
  const int64_t stepsToCheck =
      (replanEverySteps - sinceWarmup % replanEverySteps) % replanEverySteps;
  return stepsToCheck < keep;
}

DataParallel::DataParallel(std::shared_ptr<layers::Module> model, Communicator& communicator,
                           DataParallelOptions options)
    : model_(std::move(model)),
      communicator_(communicator),
      options_(std::move(options)),
      planner_(makePlanner(options_.strategy, options_.planner)),
      parameters_(model_->parameters()) {
  IMERGE_CHECK(options_.warmupSteps >= 1, "DataParallel: warmupSteps must be at least 1, got ",
               options_.warmupSteps);
  IMERGE_CHECK(options_.replanEverySteps >= 1,
               "DataParallel: replanEverySteps must be at least 1, got ",
               options_.replanEverySteps);
  checkSameEverywhere();
  broadcastStateFromRankZero();

  // A model measured at start-up goes through what the gradients will: device collectives for
  // a device communicator, host ones otherwise.
  auto measured = [&](std::vector<CommSample> samples, CollectiveKind kind) {
    if (samples.empty()) {
      const std::vector<size_t> sizes = startupMeasurementSizes();
      const size_t largest = *std::max_element(sizes.begin(), sizes.end());
      auto* device = dynamic_cast<DeviceCommunicator*>(&communicator_);
      samples = measureAllreduce(
          communicator_, sizes, 5,
          device ? device->collectiveTimer(largest, kind) : hostCollectiveTimer(largest, kind));
    }
    return beliefModelFor(options_.strategy, samples);
  };
  belief_ = planner_->usesTimings() ? measured(options_.commSamples, CollectiveKind::AllReduce)
                                    : std::make_shared<NoCostModel>();
  // imerge-overlap prices its split buckets' halves by their own measured models: Open MPI's
  // MPI_Ireduce_scatter costs up to 1.9x a whole all-reduce over TCP, not the half the ring
  // rule says (docs/scalability.md). The other strategies read the all-reduce model only.
  costs_ =
      options_.strategy == "imerge-overlap"
          ? CollectiveCosts{belief_,
                            measured(options_.reduceScatterSamples, CollectiveKind::ReduceScatter),
                            measured(options_.allGatherSamples, CollectiveKind::AllGather)}
          : ringSplitCosts(belief_);
  std::vector<std::string> names;
  for (const auto& [name, parameter] : model_->namedParameters()) names.push_back(name);
  reducer_ = std::make_unique<Reducer>(parameters_, communicator_, std::move(names));
  reducer_->setTimer(&timer_);
  // Until backward has been profiled: the reverse of registration order, no backward times.
  std::vector<size_t> order(parameters_.size());
  for (size_t position = 0; position < order.size(); ++position) {
    order[position] = order.size() - 1 - position;
  }
  ComputeProfile unprofiled;
  unprofiled.tensors = tensorInfosInOrder(parameters_, reducer_->parameterNames(), order,
                                          std::vector<double>(parameters_.size(), 0.0));
  unprofiled.forwardSecondsPerTensor.assign(order.size(), 0.0);
  agreeOnPlan(order, unprofiled);
  if (plan().overlapWithNextForward) installForwardPreHooks();
}

DataParallel::~DataParallel() {
  for (layers::Module* module : hookedModules_) module->setForwardPreHook({});
  try {
    reducer_->waitAll();
  } catch (...) {
    // Reported by whoever waited; a destructor must not throw.
  }
}

std::string DataParallel::signature() const {
  std::ostringstream out;
  out << "strategy " << options_.strategy << ", fusion bytes " << options_.planner.fusionBytes
      << ", slice elements " << options_.planner.sliceElements << ", warm-up steps "
      << options_.warmupSteps << ", world size " << communicator_.size() << "\n";
  // Ranks must agree on where gradients live and how they travel: an NCCL rank and an MPI one
  // would wait for each other's collectives forever.
  out << "parameters on " << (model_->device().type() == DeviceType::CUDA ? "cuda" : "cpu")
      << ", communicator " << communicator_.backendName() << "\n";
  out << "run: " << options_.runSignature << "\n";
  for (const auto& [name, parameter] : model_->namedParameters()) {
    out << "parameter " << name << " " << shapeText(parameter.tensor()) << "\n";
  }
  for (const auto& [name, buffer] : model_->namedBuffers()) {
    out << "buffer " << name << " " << shapeText(buffer) << "\n";
  }
  return out.str();
}

void DataParallel::checkSameEverywhere() {
  const std::string mine = signature();
  int64_t length = static_cast<int64_t>(mine.size());
  communicator_.broadcast(&length, sizeof length, 0);
  std::string rankZero(static_cast<size_t>(length), '\0');
  if (communicator_.rank() == 0) rankZero = mine;
  communicator_.broadcast(rankZero.data(), rankZero.size(), 0);

  const int workers = communicator_.size();
  std::vector<int64_t> differs(static_cast<size_t>(workers), 0);
  differs[static_cast<size_t>(communicator_.rank())] = rankZero != mine;
  communicator_.allreduceMax(differs.data(), differs.size());
  std::string ranks;
  for (int r = 0; r < workers; ++r) {
    if (differs[static_cast<size_t>(r)]) ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
  }
  if (ranks.empty()) return;

  std::string detail;
  if (rankZero != mine) {
    std::istringstream ours(mine), theirs(rankZero);
    std::string a, b;
    while (true) {
      const bool moreA = static_cast<bool>(std::getline(ours, a));
      const bool moreB = static_cast<bool>(std::getline(theirs, b));
      if (!moreA && !moreB) break;
      if (a != b || moreA != moreB) {
        detail = "; here (rank " + std::to_string(communicator_.rank()) + "): '" +
                 (moreA ? a : "<nothing>") + "', rank 0: '" + (moreB ? b : "<nothing>") + "'";
        break;
      }
    }
  }
  IMERGE_FAIL("DataParallel: rank(s) ", ranks,
              " run a different model, strategy or configuration than rank 0", detail,
              ". Every rank must be launched with the same model and flags "
              "(mpirun -np N imerge-train --dist STRATEGY ...).");
}

void DataParallel::broadcastStateFromRankZero() {
  if (communicator_.size() == 1) return;
  // Device tensors are staged through host memory: this runs once, and the host broadcast
  // works with every backend (NCCL's communicator runs host collectives over its MPI bootstrap)
  // without a device collective outside the Reducer's stream discipline.
  auto broadcast = [&](Tensor& tensor) {
    if (tensor.device().type() == DeviceType::CPU) {
      communicator_.broadcast(tensor.rawData(), tensor.bytes(), 0);
      return;
    }
    Tensor host = tensor.to(cpuDevice());  // waits for the device's queued writes
    communicator_.broadcast(host.rawData(), host.bytes(), 0);
    tensor.copyFrom(host);
  };
  for (autograd::Variable& parameter : parameters_) broadcast(parameter.tensor());
  for (auto& [name, buffer] : model_->namedBuffers()) broadcast(buffer);
}

void DataParallel::agreeOnPlan(const std::vector<size_t>& order, const ComputeProfile& profile) {
  std::vector<int64_t> encoded;
  std::string failure;
  if (communicator_.rank() == 0) {
    try {
      encoded = encodePlan(planner_->plan(profile, costs_, communicator_.size()), order);
    } catch (const Error& error) {
      failure = error.what();
    }
    plannedBackwardSpan_ = profile.backwardSeconds();
  }
  // A planner that fails on rank 0 fails every rank alike, instead of leaving the others in
  // the plan's broadcast: a negative length announces the message.
  int64_t length = failure.empty() ? static_cast<int64_t>(encoded.size())
                                   : -static_cast<int64_t>(failure.size());
  communicator_.broadcast(&length, sizeof length, 0);
  if (length < 0) {
    failure.resize(static_cast<size_t>(-length));
    communicator_.broadcast(failure.data(), failure.size(), 0);
    IMERGE_FAIL("DataParallel: rank 0 could not plan the '", options_.strategy,
                "' strategy: ", failure);
  }
  encoded.resize(static_cast<size_t>(length));
  communicator_.broadcast(encoded.data(), encoded.size() * sizeof(int64_t), 0);
  Plan plan;
  std::vector<size_t> agreedOrder;
  decodePlan(encoded, plan, agreedOrder);
  reducer_->setPlan(std::move(plan), std::move(agreedOrder));
  ++plansBuilt_;
}

ComputeProfile DataParallel::computeProfile() const {
  IMERGE_CHECK(!recentReadySeconds_.empty() && !recentForwardSeconds_.empty(),
               "DataParallel::computeProfile: no step has been profiled yet (the first step is "
               "left out when the warm-up is longer than one step); train at least 2 steps");
  return profileInOrder(reducer_->backwardOrder());
}

ComputeProfile DataParallel::profileInOrder(const std::vector<size_t>& order) const {
  std::deque<double> forwardSeconds = recentForwardSeconds_;
  std::deque<std::vector<double>> readySeconds = recentReadySeconds_;
  takeLatestOverRanks(forwardSeconds, readySeconds, communicator_);
  double busySeconds = recentIterationSeconds_.empty() ? 0.0 : meanOf(recentIterationSeconds_);
  communicator_.allreduceMax(&busySeconds, 1);

  ComputeProfile profile;
  profile.tensors = tensorInfosInOrder(parameters_, reducer_->parameterNames(), order,
                                       medianPerParameter(readySeconds, parameters_.size()));
  profile.forwardSecondsPerTensor = splitForwardByBackward(profile.tensors, meanOf(forwardSeconds));
  profile.optimizerSeconds = meanOf(recentOptimizerSeconds_);
  if (busySeconds > 0) {
    profile.otherSeconds = std::max(0.0, busySeconds - profile.forwardSeconds() -
                                             profile.backwardSeconds() - profile.optimizerSeconds);
  }
  return profile;
}

std::string DataParallel::describePlan() const {
  std::vector<TensorInfo> tensors = reducer_->tensorInfos();
  return distributed::describePlan(plan(), tensors);
}

void DataParallel::installForwardPreHooks() {
  std::unordered_map<const void*, size_t> indexOf;
  for (size_t index = 0; index < parameters_.size(); ++index) {
    indexOf[parameters_[index].id()] = index;
  }
  std::vector<layers::Module*> stack = {model_.get()};
  while (!stack.empty()) {
    layers::Module* module = stack.back();
    stack.pop_back();
    for (const auto& [name, child] : module->children()) stack.push_back(child.get());
    if (module->ownParameters().empty()) continue;
    std::vector<size_t> indices;
    for (const auto& [name, parameter] : module->ownParameters()) {
      indices.push_back(indexOf.at(parameter.id()));
    }
    module->setForwardPreHook([this, indices](layers::Module&) {
      for (size_t index : indices) applyPendingUpdate(index);
    });
    hookedModules_.push_back(module);
  }
}

void DataParallel::applyPendingUpdate(size_t parameterIndex) {
  if (updatePending_.empty() || !updatePending_[parameterIndex]) return;
  const auto start = CommClock::now();
  reducer_->waitForParameter(parameterIndex);
  const auto updateStart = CommClock::now();
  autograd::Variable& parameter = parameters_[parameterIndex];
  optimizer_->stepParameter(parameterIndex, parameter.grad(), pendingLearningRate_);
  parameter.zeroGrad();
  updatePending_[parameterIndex] = 0;
  const auto end = CommClock::now();
  updateSeconds_ += secondsBetween(start, end);
  optimizerSeconds_ += secondsBetween(updateStart, end);
}

autograd::Variable DataParallel::forward(const autograd::Variable& input) {
  closeIteration();
  iterationOpen_ = true;
  iterationStart_ = CommClock::now();
  reducer_->markForwardStart();
  if (options_.trace) options_.trace->setStep(step_);
  const double updateSecondsBefore = updateSeconds_;
  autograd::Variable output = model_->forward(input);
  forwardEnd_ = CommClock::now();
  computeSeconds_ += secondsBetween(iterationStart_, forwardEnd_);
  forwardSeconds_ = std::max(
      0.0, secondsBetween(iterationStart_, forwardEnd_) - (updateSeconds_ - updateSecondsBefore));
  // On a GPU the rows come from device times, in closeIteration().
  if (options_.trace && !reducer_->onDevice()) {
    options_.trace->record("forward", "forward", TraceRow::Compute, iterationStart_, forwardEnd_);
  }
  return output;
}

void DataParallel::backward(const autograd::Variable& loss) {
  const auto start = CommClock::now();
  // Priority: parameters whose layer's forward did not run their pre-hook are updated here.
  for (size_t index = 0; index < updatePending_.size(); ++index) applyPendingUpdate(index);
  reducer_->prepareForBackward(step_, profilesThisStep());
  autograd::Variable root = loss;
  root.backward();
  const auto backwardEnd = CommClock::now();
  reducer_->finish();
  computeSeconds_ += secondsBetween(start, CommClock::now());

  // On a GPU the rows come from device times, in closeIteration().
  if (options_.trace && !reducer_->onDevice()) {
    recordBackwardRows();
    options_.trace->record("finish (wait, check)", "wait", TraceRow::Compute, backwardEnd,
                           CommClock::now());
  }
}

bool DataParallel::profilesThisStep() const {
  return !reducer_->onDevice() || options_.trace != nullptr ||
         profilesStepOnDevice(step_, options_.warmupSteps, options_.replanEverySteps,
                              planner_->usesTimings());
}

void DataParallel::recordBackwardRows() {
  const std::vector<double>& ready = reducer_->lastReadySeconds();
  const auto backwardStart = reducer_->backwardStart();
  auto at = [&](double seconds) {
    return backwardStart +
           std::chrono::duration_cast<CommClock::duration>(std::chrono::duration<double>(seconds));
  };
  double previous = 0;
  for (size_t index : reducer_->lastHookOrder()) {
    options_.trace->record(reducer_->parameterNames()[index], "backward", TraceRow::Compute,
                           at(previous), at(ready[index]));
    previous = std::max(previous, ready[index]);
  }
}

void DataParallel::step(optim::Sgd& optimizer) {
  const auto start = CommClock::now();
  if (optimizer_ != &optimizer) {
    const auto& theirs = optimizer.parameters();
    bool same = theirs.size() == parameters_.size();
    for (size_t i = 0; same && i < theirs.size(); ++i) same = theirs[i].id() == parameters_[i].id();
    IMERGE_CHECK(same, "DataParallel::step: the optimizer's ", theirs.size(),
                 " parameters are not the model's ", parameters_.size(),
                 " parameters in registration order; build it from model->parameters()");
    optimizer_ = &optimizer;
  }
  if (plan().overlapWithNextForward) {
    pendingLearningRate_ = optimizer.learningRate();
    updatePending_.assign(parameters_.size(), 1);
  } else {
    optimizer.step();
    optimizer.zeroGrad();
    optimizerSeconds_ += secondsBetween(start, CommClock::now());
  }
  reducer_->markStepEnd();
  afterStep();
  const auto end = CommClock::now();
  computeSeconds_ += secondsBetween(start, end);
  if (options_.trace && !reducer_->onDevice())
    options_.trace->record("optimizer", "optimizer", TraceRow::Compute, start, end);
}

void DataParallel::afterStep() {
  const auto start = CommClock::now();
  // On a GPU the host's clocks measured only the queueing: the profiled steps' figures come
  // from the device (waiting here until it has run the step).
  bool measured = true;
  if (reducer_->onDevice()) {
    measured = reducer_->collectReadySeconds();
    if (measured) {
      const DeviceStepFigures device =
          deviceStepFigures(reducer_->readDeviceStepTimes(), reducer_->backwardStart());
      forwardSeconds_ = device.forwardSeconds.value_or(forwardSeconds_);
      optimizerSeconds_ = device.optimizerSeconds.value_or(optimizerSeconds_);
    }
  }
  // The first step runs on cold caches and allocators; it is profiled only when it is the
  // whole warm-up.
  if (measured && (step_ > 0 || options_.warmupSteps == 1)) {
    recentReadySeconds_.push_back(reducer_->lastReadySeconds());
    recentForwardSeconds_.push_back(forwardSeconds_);
    recentOptimizerSeconds_.push_back(optimizerSeconds_);
    const size_t keep = static_cast<size_t>(std::min<int64_t>(options_.warmupSteps, 5));
    while (recentReadySeconds_.size() > std::max<size_t>(keep, 1)) {
      recentReadySeconds_.pop_front();
      recentForwardSeconds_.pop_front();
      recentOptimizerSeconds_.pop_front();
    }
  }
  optimizerSeconds_ = 0;
  lastHookOrder_ = reducer_->lastHookOrder();
  ++step_;

  bool replan = step_ == options_.warmupSteps;
  const int64_t sinceWarmup = step_ - options_.warmupSteps;
  const bool checksDrift = !replan && planner_->usesTimings() && sinceWarmup > 0 &&
                           sinceWarmup % options_.replanEverySteps == 0;
  // A bucket can leave only when every rank has its gradients, so the plan (like the profile
  // the simulator plans from) takes the slowest rank's ready times, not rank 0's own.
  ComputeProfile profile;
  if (replan || checksDrift) profile = profileInOrder(lastHookOrder_);
  if (checksDrift) {
    int64_t drifted = 0;
    if (communicator_.rank() == 0) {
      const double span = profile.backwardSeconds();
      // At least the tolerance, so a tolerance of 0 replans at every check, even when the
      // medians happen to repeat the planned span exactly.
      drifted = std::abs(span - plannedBackwardSpan_) >=
                options_.driftTolerance * std::max(plannedBackwardSpan_, 1e-9);
    }
    communicator_.broadcast(&drifted, sizeof drifted, 0);
    replan = drifted != 0;
  }
  if (replan) {
    reducer_->waitAll();
    for (size_t index = 0; index < updatePending_.size(); ++index) applyPendingUpdate(index);
    agreeOnPlan(lastHookOrder_, profile);
  }
  ownBookkeepingSeconds_ += secondsBetween(start, CommClock::now());
}

void DataParallel::synchronize() {
  closeIteration();
  reducer_->waitAll();
  for (size_t index = 0; index < updatePending_.size(); ++index) applyPendingUpdate(index);
  // What was waited for here belongs to no iteration.
  timer_.takeWaits();
  timer_.takeIntervals();
}

void DataParallel::closeIteration() {
  if (!iterationOpen_) return;
  iterationOpen_ = false;
  const auto end = CommClock::now();
  const std::vector<CommInterval> intervals = timer_.takeIntervals();
  const std::vector<CommInterval> waits = timer_.takeWaits();

  StepBreakdown breakdown;
  breakdown.step = step_ - 1;
  breakdown.iterationSeconds = secondsBetween(iterationStart_, end);
  breakdown.buckets = plan().buckets.size();
  double exposed = 0;
  for (const CommInterval& interval : intervals) {
    breakdown.communicationSeconds += secondsBetween(interval.start, interval.end);
    for (const CommInterval& wait : waits) exposed += overlapSeconds(interval, wait);
  }
  for (const CommInterval& wait : waits) {
    breakdown.waitingSeconds += secondsBetween(wait.start, wait.end);
  }
  breakdown.overlappedSeconds = std::max(0.0, breakdown.communicationSeconds - exposed);
  breakdown.computeSeconds = std::max(0.0, computeSeconds_ - breakdown.waitingSeconds);
  if (reducer_->onDevice()) {
    // Device times (device_step_times.h); waits for the step's last marks, which a loop that
    // reads its loss each step has already done.
    const DeviceStepTimes times = reducer_->readDeviceStepTimes();
    const DeviceStepFigures device = deviceStepFigures(times, reducer_->backwardStart());
    breakdown.communicationSeconds = device.communicationSeconds;
    breakdown.waitingSeconds = device.waitingSeconds;
    breakdown.overlappedSeconds = device.overlappedSeconds;
    breakdown.computeSeconds =
        device.computeSeconds.value_or(std::max(0.0, computeSeconds_ - device.waitingSeconds));
    if (options_.trace) recordDeviceRows(times, device);
  }
  breakdown.bookkeepingSeconds = timer_.takeBookkeepingSeconds() + ownBookkeepingSeconds_;
  breakdowns_.push_back(breakdown);
  // For computeProfile(): the iteration without waiting, after the cold first one.
  if (breakdown.step > 0 || options_.warmupSteps == 1) {
    recentIterationSeconds_.push_back(breakdown.iterationSeconds - breakdown.waitingSeconds);
    if (recentIterationSeconds_.size() > 5) recentIterationSeconds_.pop_front();
  }
  computeSeconds_ = 0;
  ownBookkeepingSeconds_ = 0;

  if (options_.trace) {
    for (const CommInterval& interval : intervals) recordCollectiveRow(interval);
  }
}

void DataParallel::recordDeviceRows(const DeviceStepTimes& times, const DeviceStepFigures& device) {
  const auto anchor = reducer_->backwardStart();
  auto at = [&](double seconds) {
    return anchor +
           std::chrono::duration_cast<CommClock::duration>(std::chrono::duration<double>(seconds));
  };
  if (times.forwardStart) {
    options_.trace->record("forward", "forward", TraceRow::Compute, at(*times.forwardStart),
                           at(0.0));
  }
  if (reducer_->collectReadySeconds()) recordBackwardRows();
  for (const CommInterval& wait : device.waits) {
    options_.trace->record("wait for all-reduces", "wait", TraceRow::Compute, wait.start, wait.end);
  }
  for (const CommInterval& interval : device.intervals) recordCollectiveRow(interval);
  if (times.stepEnd && device.optimizerSeconds) {
    options_.trace->record("optimizer", "optimizer", TraceRow::Compute,
                           at(*times.stepEnd - *device.optimizerSeconds), at(*times.stepEnd));
  }
}

void DataParallel::recordCollectiveRow(const CommInterval& interval) {
  // The simulator's names and categories (simulator.cpp), so traces of both read alike.
  static constexpr const char* kName[] = {"all-reduce", "reduce-scatter", "all-gather"};
  static constexpr const char* kCategory[] = {"allreduce", "reducescatter", "allgather"};
  const int kind = static_cast<int>(interval.kind);
  options_.trace->record(std::string(kName[kind]) + " bucket " + std::to_string(interval.bucket),
                         kCategory[kind], TraceRow::Communication, interval.start, interval.end,
                         interval.bytes);
}

std::vector<StepBreakdown> DataParallel::takeBreakdowns() {
  return std::exchange(breakdowns_, {});
}

}  // namespace imerge::distributed
