// DataParallel: synchronous data-parallel training of one model replica per rank (PyTorch DDP,
// Horovod), with the gradient-fusion strategy of docs/design.md section 4 executed inside backward.
//
//   DataParallel parallel(model, communicator, {.strategy = "imerge"});
//   for each batch of this rank's shard:
//     Variable loss = lossOf(parallel.forward(images));
//     parallel.backward(loss);   // buckets all-reduced while backward runs; averaged
//     parallel.step(optimizer);  // updates and clears the gradients
//   parallel.synchronize();      // before evaluating or saving (priority, imerge-overlap
//  update lazily)
//
// At construction every rank checks that all ranks run the same model, strategy and run
// configuration (a clear error naming the ranks that differ), then takes rank 0's parameters
// and buffers. The plan is rank 0's: rank 0 plans, broadcasts, and every rank installs it. The
// first `warmupSteps` steps profile each tensor's backward time in the engine's own hooks; then
// the plan is rebuilt from rank 0's measured order and times, and for the strategies that use
// timings it is rebuilt again whenever they drift.
//
// A model on a GPU (Module::to before building this) needs a DeviceCommunicator of that GPU
// (NCCL, or MPI through host copies; device_communicator.h), except in a world of one. The
// Reducer then averages on the device, ordered with the compute stream by events, and the host
// does not wait in backward. The start-up broadcast stages device tensors through host memory.
// Backward times come from CUDA events recorded in the hooks, read after the step, during the
// warm-up and the steps before each drift check only (profilesStepOnDevice; every step with a
// trace), since reading them waits for the device. The breakdown's figures are device times
// (device_step_times.h says what each means). `priority` with more than one rank is refused, and
// so is an `imerge-overlap` plan with split or deferred buckets (the device communicators
// all-reduce only).
#pragma once

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "distributed/comm/communicator.h"
#include "distributed/planning/comm_model.h"
#include "distributed/planning/compute_profile.h"
#include "distributed/planning/planner.h"
#include "distributed/planning/trace.h"
#include "distributed/runtime/device_step_times.h"
#include "distributed/runtime/reducer.h"
#include "layers/module.h"
#include "optim/sgd.h"

namespace imerge::distributed {

struct DataParallelOptions {
  std::string strategy = "wfbp";
  PlannerOptions planner;
  // The measured communication model (e.g. from imerge-commbench); empty: measured at start-up
  // for the strategies that plan with one.
  std::vector<CommSample> commSamples;
  // imerge-overlap's split buckets: the measured reduce-scatter and all-gather costs of a whole
  // bucket (imerge-commbench --collective); empty: measured at start-up, as commSamples.
  std::vector<CommSample> reduceScatterSamples, allGatherSamples;
  int64_t warmupSteps = 5;         // profiled before the plan is rebuilt (at least 1)
  int64_t replanEverySteps = 200;  // drift checks, for strategies that use timings
  double driftTolerance = 0.25;    // relative change of the backward span that triggers one
                                   // (0: every check replans)
  Trace* trace = nullptr;          // per-rank timeline, when set
  // The caller's run configuration (batch size, epochs, ...), part of the start-up check.
  std::string runSignature;
};

// Whether step `step` (0-based) of a run on a GPU measures its gradients' ready times: every
// warm-up step, and for strategies that plan with timings the last min(warmupSteps, 5) steps
// before each drift check (those are what the re-planning reads).
bool profilesStepOnDevice(int64_t step, int64_t warmupSteps, int64_t replanEverySteps,
                          bool usesTimings);

// The profiled steps as the slowest rank ran them, in place: a bucket's all-reduce starts only
// when the last rank has its gradients, so per step the forward pass becomes the longest over
// ranks and each tensor's ready time the latest (forward + ready) over ranks less that forward.
// Collective; refused on every rank alike when the ranks profiled different numbers of steps
// or parameters.
void takeLatestOverRanks(std::deque<double>& forwardSeconds,
                         std::deque<std::vector<double>>& readySeconds, Communicator& ranks);

// One iteration, from the start of its forward to the start of the next. With gradients on a
// GPU, communication, overlap and waiting are device times, and compute is the device's time
// from forward start to optimizer end less the waiting (device_step_times.h).
struct StepBreakdown {
  int64_t step = 0;
  double iterationSeconds = 0;
  double computeSeconds = 0;        // forward + backward + optimizer, waiting excluded
  double communicationSeconds = 0;  // all-reduces on the communication thread
  double overlappedSeconds = 0;     // communication while the main thread was not waiting
  double waitingSeconds = 0;        // main thread blocked on communication
  double bookkeepingSeconds = 0;    // the scheduler's own work in hooks and finish()
  size_t buckets = 0;
};

class DataParallel {
 public:
  DataParallel(std::shared_ptr<layers::Module> model, Communicator& communicator,
               DataParallelOptions options);
  ~DataParallel();
  DataParallel(const DataParallel&) = delete;
  DataParallel& operator=(const DataParallel&) = delete;

  autograd::Variable forward(const autograd::Variable& input);
  // Backward through `loss`, with every bucket all-reduced and averaged when it returns
  // (priority, imerge-overlap: still in flight; each layer's next forward waits for its own
  // update).
  void backward(const autograd::Variable& loss);
  // The optimizer step on the averaged gradients, which it then clears. `optimizer` must hold
  // the model's parameters in registration order.
  void step(optim::Sgd& optimizer);
  // Waits for everything in flight and applies pending updates: before evaluation, checkpoints
  // and the end of training.
  void synchronize();

  // Breakdowns of the iterations completed since the last call.
  std::vector<StepBreakdown> takeBreakdowns();

  int rank() const { return communicator_.rank(); }
  int worldSize() const { return communicator_.size(); }
  const std::string& strategy() const { return options_.strategy; }
  const Plan& plan() const { return reducer_->plan(); }
  std::string describePlan() const;
  int64_t plansBuilt() const { return plansBuilt_; }
  const CommModel* beliefModel() const { return belief_.get(); }
  // Whether the strategy's planner reads beliefModel() (the others plan by sizes alone).
  bool plansWithCommModel() const { return planner_->usesTimings(); }
  Communicator& communicator() { return communicator_; }
  // The compute profile (compute_profile.h) from the steps profiled so far (the last five
  // after the cold first one, as the plan uses), as the slowest rank ran them
  // (takeLatestOverRanks): the tensors in the installed plan's backward order with their median
  // backward times, the mean forward pass (without waiting for or applying priority's updates)
  // split over the tensors by backward time, this rank's mean optimizer step, and as the rest
  // what the longest mean iteration over ranks (waiting excluded) holds besides. Collective:
  // every rank calls it. Throws imerge::Error before the first profiled step.
  ComputeProfile computeProfile() const;

 private:
  std::string signature() const;
  void checkSameEverywhere();
  void broadcastStateFromRankZero();
  // Rank 0 plans from `profile` (its tensors in `order`, parameter indices) and every rank
  // installs rank 0's plan.
  void agreeOnPlan(const std::vector<size_t>& order, const ComputeProfile& profile);
  // computeProfile() with the tensors in `order` (parameter indices). Collective.
  ComputeProfile profileInOrder(const std::vector<size_t>& order) const;
  void afterStep();
  bool profilesThisStep() const;
  void recordBackwardRows();
  void recordDeviceRows(const DeviceStepTimes& times, const DeviceStepFigures& device);
  void recordCollectiveRow(const CommInterval& interval);
  void installForwardPreHooks();
  void applyPendingUpdate(size_t parameterIndex);
  void closeIteration();

  std::shared_ptr<layers::Module> model_;
  Communicator& communicator_;
  DataParallelOptions options_;
  std::unique_ptr<Planner> planner_;
  std::shared_ptr<const CommModel> belief_;
  CollectiveCosts costs_;  // belief_, and the halves imerge-overlap's split buckets cost
  CommTimer timer_;        // declared before reducer_, which reports to it until destroyed
  std::unique_ptr<Reducer> reducer_;
  std::vector<autograd::Variable> parameters_;
  std::vector<layers::Module*> hookedModules_;

  int64_t step_ = 0;  // steps completed
  int64_t plansBuilt_ = 0;
  std::deque<std::vector<double>> recentReadySeconds_;  // per step, per parameter index
  std::vector<size_t> lastHookOrder_;
  // Per profiled step, for computeProfile(): the forward pass without priority's waits and
  // updates, and the optimizer's work (step() or, for priority, the updates in the hooks).
  std::deque<double> recentForwardSeconds_, recentOptimizerSeconds_, recentIterationSeconds_;
  double forwardSeconds_ = 0, updateSeconds_ = 0, optimizerSeconds_ = 0;
  double plannedBackwardSpan_ = 0;

  // Priority: updates of the last step not applied yet, and the rate they use.
  optim::Sgd* optimizer_ = nullptr;
  std::vector<uint8_t> updatePending_;
  float pendingLearningRate_ = 0;

  // The iteration being measured.
  bool iterationOpen_ = false;
  CommClock::time_point iterationStart_, forwardEnd_;
  double computeSeconds_ = 0, ownBookkeepingSeconds_ = 0;
  std::vector<StepBreakdown> breakdowns_;
};

}  // namespace imerge::distributed
