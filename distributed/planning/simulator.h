// The simulator: a discrete-event model of synchronous data-parallel iterations that executes a
// real planner's Plan (the same Plan the Reducer executes) on a compute profile and charges a
// communication model of the cluster (docs/design.md section 3). The planner plans with what it
// believes (its own CommModel, given to Planner::plan by the caller); the simulator charges
// `truth`: the two are separate inputs, so a strategy that misjudges small messages pays for it.
//
// The model of one iteration, on each of `workers` identical workers (so one is simulated):
//   forward   the profile's forward pass, layer by layer in forward order (the reverse of
//             backward order);
//   backward  tensor k's gradient is final at r_k after backward starts (readyTimes());
//   channel   one communication channel, scheduled by scheduleOnOneChannel (channel_schedule.h):
//             FIFO plans in plan order, each bucket once its last tensor is final (or once
//             backward has ended, plan.startAfterBackward); Priority plans by priority among the
//             ready buckets. Each all-reduce lasts truth.seconds(bytes, workers). A Priority
//             plan's buckets are negotiated one at a time, as PriorityScheduler does: before each
//             slice one bitwise-AND all-reduce of ceil(buckets / 8) bytes, charged from `truth`
//             too (options.negotiatePrioritySlices).
//   FIFO plans      after backward the worker waits for the last all-reduce, then runs the
//                   optimizer; the next forward starts after it.
//   overlap plans   (plan.overlapWithNextForward, `priority`, `imerge-overlap`): the next
//                   forward starts when backward ends; the forward of tensor k's layer waits
//                   until k's slices of the previous iteration have been reduced, then applies
//                   its update (the optimizer's time split over the tensors by bytes) and runs.
//                   Since every layer waits for its own slices, the channel is idle again when
//                   the next backward starts, so each iteration's schedule starts on a free
//                   channel.
//   forward phase   (`imerge-overlap`, Bucket::Schedule in plan.h): during backward the
//                   channel charges a Split bucket options.reduceScatter instead of the
//                   all-reduce, and a BeforeForward bucket nothing; once every bucket's
//                   backward part has ended, Split buckets' all-gathers (options.allGather) and
//                   BeforeForward buckets' all-reduces (`truth`) follow one after another in
//                   forward order, and such a bucket's tensors are reduced when it ends.
// After that the profile's other work (loss, metrics, data: otherSeconds) precedes the next
// forward. One iteration runs from the start of a forward to the start of the next. The first
// iteration of an overlap plan has nothing to wait for, so `iterations` (at least 2) are simulated
// and the last is reported: the steady state. With one worker nothing is communicated.
//
// Contention (options.contention, contended_schedule.h): where compute and communication share
// cores, an all-reduce costs contention.besideCompute while the worker computes (backward, and
// for overlap plans also the next forward) and `truth` while it waits, and backward runs
// computeSlowdown times slower while an all-reduce is in flight. Without it both run beside
// each other at full speed. The forward of an overlap plan is not slowed down. Split buckets'
// halves suffer contention in the proportion an all-reduce of their bytes does
// (contended_schedule.h); an all-gather always runs beside the forward.
//
// What is not modelled: the scheduler's own bookkeeping in hooks and finish(), the time the
// communication thread needs to wake up, stragglers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "distributed/planning/comm_model.h"
#include "distributed/planning/compute_profile.h"
#include "distributed/planning/contended_schedule.h"
#include "distributed/planning/plan.h"
#include "distributed/planning/trace.h"

namespace imerge::distributed {

struct SimOptions {
  int iterations = 3;  // simulated; the last one is reported (at least 2)
  // Charge PriorityScheduler's agreement round before each slice of a Priority plan.
  bool negotiatePrioritySlices = true;
  // Images per worker and iteration, for throughput; 0: the profile's batchPerWorker.
  int64_t batchPerWorker = 0;
  // Compute and communication sharing cores; none by default.
  Contention contention{};
  // What a Split bucket's two halves truly cost (collective_costs.h); a plan with Split buckets
  // needs both.
  const CommModel* reduceScatter = nullptr;
  const CommModel* allGather = nullptr;
};

// One interval of the simulated timeline, in seconds from the start of the first iteration.
struct SimEvent {
  std::string name;
  // "forward", "backward", "allreduce", "reducescatter", "allgather", "negotiation", "wait",
  // "optimizer", "other"
  std::string category;
  TraceRow row = TraceRow::Compute;
  double startSeconds = 0;
  double endSeconds = 0;
  int64_t step = 0;
  size_t bytes = 0;  // collectives
};

struct SimResult {
  int workers = 1;
  size_t buckets = 0;
  // The reported (last) iteration, as DataParallel's StepBreakdown measures a real one.
  double iterationSeconds = 0;
  double computeSeconds = 0;        // forward + backward + optimizer, waiting excluded
  double communicationSeconds = 0;  // collectives' time of this iteration's buckets
  double negotiationSeconds = 0;    // priority's agreement rounds (channel time, not in the above)
  double overlappedSeconds = 0;     // communication while the worker was not waiting
  double waitingSeconds = 0;        // the worker blocked on communication
  // One worker's iteration (no communication at all) and what `workers` gain over it.
  double singleWorkerIterationSeconds = 0;
  double speedup = 1;            // throughput over one worker's: workers * single / iteration
  double scalingEfficiency = 1;  // speedup / workers
  int64_t batchPerWorker = 0;
  double imagesPerSecond = 0;   // all workers together; 0 without a batch size
  std::vector<SimEvent> trace;  // every simulated iteration
};

// The interface of docs/design.md section 3: `forwardSeconds` is split over the tensors by backward
// time (splitForwardByBackward), no optimizer time, default options.
SimResult simulate(const Plan& plan, const std::vector<TensorInfo>& tensors, double forwardSeconds,
                   const CommModel& truth, int workers);

// The full form. The plan must be valid for profile.tensors (validatePlan); workers >= 1.
SimResult simulate(const Plan& plan, const ComputeProfile& profile, const CommModel& truth,
                   int workers, const SimOptions& options = {});

// The simulated timeline as a Chrome trace (the format of Trace::write: rows "compute" and
// "communication" of one process named `label`), written atomically; an imerge::Error names
// the path when it cannot.
void writeSimTrace(const std::string& path, const SimResult& result,
                   const std::string& label = "simulated worker");

}  // namespace imerge::distributed
