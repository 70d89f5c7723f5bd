// The simulator (contract in simulator.h). The channel's schedule within one iteration is
// scheduleOnOneChannel's (the same function the planners' tests reason with); this file adds
// the forward pass, the wait in finish(), the optimizer, priority's overlap with the next
// forward pass and the bookkeeping of a timeline.
#include "distributed/planning/simulator.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "distributed/planning/channel_schedule.h"
#include "distributed/planning/contended_schedule.h"

namespace imerge::distributed {
namespace {

// An all-reduce preceded by PriorityScheduler's agreement round on the ready mask.
class NegotiatedCost final : public CommModel {
 public:
  NegotiatedCost(const CommModel& truth, size_t maskBytes) : truth_(truth), maskBytes_(maskBytes) {}
  double seconds(size_t bytes, int workers) const override {
    return truth_.seconds(maskBytes_, workers) + truth_.seconds(bytes, workers);
  }
  std::string describe() const override { return "agreement round + " + truth_.describe(); }
  std::vector<CommPiece> piecesAt(int workers) const override {
    std::vector<CommPiece> pieces = truth_.piecesAt(workers);
    for (CommPiece& piece : pieces) piece.latencySeconds += truth_.seconds(maskBytes_, workers);
    return pieces;
  }

 private:
  const CommModel& truth_;
  size_t maskBytes_;
};

double overlapSeconds(double startA, double endA, double startB, double endB) {
  return std::max(0.0, std::min(endA, endB) - std::max(startA, startB));
}

}  // namespace

SimResult simulate(const Plan& plan, const std::vector<TensorInfo>& tensors, double forwardSeconds,
                   const CommModel& truth, int workers) {
  ComputeProfile profile;
  profile.tensors = tensors;
  profile.forwardSecondsPerTensor = splitForwardByBackward(tensors, forwardSeconds);
  return simulate(plan, profile, truth, workers);
}

SimResult simulate(const Plan& plan, const ComputeProfile& profile, const CommModel& truth,
                   int workers, const SimOptions& options) {
  IMERGE_CHECK(workers >= 1, "simulate: workers must be at least 1, not ", workers);
  IMERGE_CHECK(options.iterations >= 2,
               "simulate: at least 2 iterations are needed to reach "
               "the steady state, not ",
               options.iterations);
  validateComputeProfile(profile, "simulate");
  const std::vector<TensorInfo>& tensors = profile.tensors;
  validatePlan(plan, tensors);
  const bool splits = std::any_of(plan.buckets.begin(), plan.buckets.end(), [](const Bucket& b) {
    return b.schedule == Bucket::Schedule::Split;
  });
  IMERGE_CHECK(!splits || (options.reduceScatter && options.allGather),
               "simulate: the plan splits buckets, but the reduce-scatter and all-gather costs "
               "were not given (SimOptions)");

  const size_t tensorCount = tensors.size();
  std::vector<double> ready = readyTimes(tensors);
  const double forwardSpan = profile.forwardSeconds();
  double totalBytes = 0;
  for (const TensorInfo& tensor : tensors) totalBytes += static_cast<double>(tensor.bytes);

  // The channel's schedule relative to the start of backward: the same in every iteration,
  // because each iteration's all-reduces find the channel idle (see simulator.h).
  const bool communicates = workers > 1 && !plan.buckets.empty();
  const bool negotiates =
      communicates && plan.order == LaunchOrder::Priority && options.negotiatePrioritySlices;
  const size_t maskBytes = (plan.buckets.size() + 7) / 8;
  const double negotiationSeconds = negotiates ? truth.seconds(maskBytes, workers) : 0.0;
  std::vector<BucketTiming> timings;
  std::vector<double> sendSeconds(plan.buckets.size(), 0.0);
  // What buckets send before the next forward (all-gathers, deferred all-reduces): when each
  // starts and ends (0, 0 for the others).
  std::vector<BucketTiming> beforeForward(plan.buckets.size());
  std::vector<double> reducedAt(tensorCount, 0.0);  // when tensor k's last piece is reduced
  double channelEnd = 0;
  if (communicates) {
    const NegotiatedCost negotiated(truth, maskBytes);
    const CommModel& idleCost = negotiates ? static_cast<const CommModel&>(negotiated) : truth;
    if (options.contention.besideCompute != nullptr) {
      const NegotiatedCost negotiatedBeside(*options.contention.besideCompute, maskBytes);
      Contention contention = options.contention;
      if (negotiates) contention.besideCompute = &negotiatedBeside;
      ContendedSchedule schedule =
          scheduleBesideCompute(plan, tensors, idleCost, contention, plan.overlapWithNextForward,
                                workers, options.reduceScatter);
      timings = std::move(schedule.buckets);
      ready = std::move(schedule.readySeconds);
    } else {
      timings = scheduleOnOneChannel(plan, tensors, idleCost, workers, options.reduceScatter);
    }
    for (size_t b = 0; b < plan.buckets.size(); ++b) {
      const double bytesSeconds =
          backwardPartSeconds(plan.buckets[b], b, truth, options.reduceScatter, workers);
      sendSeconds[b] = bytesSeconds;
      if (options.contention.besideCompute != nullptr && bytesSeconds > 0) {
        // Contention stretches the bucket's time on the channel; the agreement round before it
        // (Priority) keeps its share.
        sendSeconds[b] = (timings[b].endSeconds - timings[b].startSeconds) * bytesSeconds /
                         (bytesSeconds + negotiationSeconds);
      }
      for (size_t k : plan.buckets[b].tensors) {
        reducedAt[k] = std::max(reducedAt[k], timings[b].endSeconds);
      }
      channelEnd = std::max(channelEnd, timings[b].endSeconds);
    }
    // All-gathers and deferred all-reduces, in forward order, beside the next forward: under
    // contention each costs what an all-reduce of its bytes suffers beside compute, in
    // proportion.
    for (size_t b = plan.buckets.size(); b-- > 0;) {
      const Bucket& bucket = plan.buckets[b];
      if (bucket.schedule == Bucket::Schedule::Backward) continue;
      const double whole = truth.seconds(bucket.bytes, workers);
      double seconds = bucket.schedule == Bucket::Schedule::Split
                           ? options.allGather->seconds(bucket.bytes, workers)
                           : whole;
      if (options.contention.besideCompute != nullptr && whole > 0) {
        seconds *= options.contention.besideCompute->seconds(bucket.bytes, workers) / whole;
      }
      beforeForward[b] = {channelEnd, channelEnd, channelEnd + seconds};
      channelEnd += seconds;
      for (size_t k : bucket.tensors) reducedAt[k] = beforeForward[b].endSeconds;
    }
  }

  const double backwardSpan = ready.back();  // contention can stretch backward

  SimResult result;
  result.workers = workers;
  result.buckets = plan.buckets.size();
  std::vector<SimEvent>& trace = result.trace;
  auto record = [&](std::string name, const char* category, TraceRow row, double start, double end,
                    int64_t step, size_t bytes = 0) {
    trace.push_back({std::move(name), category, row, start, end, step, bytes});
  };

  std::vector<double> iterationStart;
  std::vector<std::vector<std::pair<double, double>>> waits(options.iterations);
  std::vector<std::pair<double, double>> sends;  // every all-reduce, all iterations
  double now = 0;
  double previousBackward = 0;  // when the last iteration's backward started
  for (int64_t step = 0; step < options.iterations; ++step) {
    iterationStart.push_back(now);
    // Forward. Overlap plans: layer by layer, each waiting for its slices of the last step.
    if (plan.overlapWithNextForward && step > 0) {
      for (size_t position = 0; position < tensorCount; ++position) {
        const size_t k = tensorCount - 1 - position;
        const double reduced = previousBackward + reducedAt[k];
        if (communicates && reduced > now) {
          record("wait for " + tensors[k].name, "wait", TraceRow::Compute, now, reduced, step);
          waits[step].push_back({now, reduced});
          now = reduced;
        }
        const double update =
            totalBytes > 0
                ? profile.optimizerSeconds * static_cast<double>(tensors[k].bytes) / totalBytes
                : 0.0;
        if (update > 0) {
          record("update " + tensors[k].name, "optimizer", TraceRow::Compute, now, now + update,
                 step);
        }
        now += update;
        const double forward = profile.forwardSecondsPerTensor[k];
        if (forward > 0) {
          record("forward " + tensors[k].name, "forward", TraceRow::Compute, now, now + forward,
                 step);
        }
        now += forward;
      }
    } else {
      record("forward", "forward", TraceRow::Compute, now, now + forwardSpan, step);
      now += forwardSpan;
    }

    // Backward, and the all-reduces it starts.
    const double backwardStart = now;
    previousBackward = backwardStart;
    for (size_t k = 0; k < tensorCount; ++k) {
      record(tensors[k].name, "backward", TraceRow::Compute,
             backwardStart + (k == 0 ? 0.0 : ready[k - 1]), backwardStart + ready[k], step);
    }
    for (size_t b = 0; b < timings.size(); ++b) {
      const double start = backwardStart + timings[b].startSeconds;
      const double sendStart = timings[b].endSeconds - sendSeconds[b];
      if (negotiates) {
        record("agreement before bucket " + std::to_string(b), "negotiation",
               TraceRow::Communication, start, backwardStart + sendStart, step, maskBytes);
      }
      const Bucket::Schedule schedule = plan.buckets[b].schedule;
      const std::string index = std::to_string(b);
      if (schedule != Bucket::Schedule::BeforeForward) {
        const bool split = schedule == Bucket::Schedule::Split;
        record((split ? "reduce-scatter bucket " : "all-reduce bucket ") + index,
               split ? "reducescatter" : "allreduce", TraceRow::Communication,
               backwardStart + sendStart, backwardStart + timings[b].endSeconds, step,
               plan.buckets[b].bytes);
        sends.push_back({backwardStart + sendStart, backwardStart + timings[b].endSeconds});
      }
      if (schedule != Bucket::Schedule::Backward) {
        const bool split = schedule == Bucket::Schedule::Split;
        const BucketTiming& late = beforeForward[b];
        record((split ? "all-gather bucket " : "all-reduce before forward, bucket ") + index,
               split ? "allgather" : "allreduce", TraceRow::Communication,
               backwardStart + late.startSeconds, backwardStart + late.endSeconds, step,
               plan.buckets[b].bytes);
        sends.push_back({backwardStart + late.startSeconds, backwardStart + late.endSeconds});
      }
    }
    now = backwardStart + backwardSpan;

    // FIFO plans: finish() waits for the last all-reduce, then the optimizer step.
    if (!plan.overlapWithNextForward) {
      const double lastReduced = backwardStart + channelEnd;
      if (communicates && lastReduced > now) {
        record("finish (wait, check)", "wait", TraceRow::Compute, now, lastReduced, step);
        waits[step].push_back({now, lastReduced});
        now = lastReduced;
      }
      if (profile.optimizerSeconds > 0) {
        record("optimizer", "optimizer", TraceRow::Compute, now, now + profile.optimizerSeconds,
               step);
      }
      now += profile.optimizerSeconds;
    }
    // The rest of the iteration (loss, metrics, the next batch) before the next forward.
    if (profile.otherSeconds > 0) {
      record("other (loss, metrics, data)", "other", TraceRow::Compute, now,
             now + profile.otherSeconds, step);
    }
    now += profile.otherSeconds;
  }
  iterationStart.push_back(now);

  // The last iteration: the steady state.
  const int64_t reported = options.iterations - 1;
  result.iterationSeconds = iterationStart[reported + 1] - iterationStart[reported];
  for (const auto& [start, end] : waits[reported]) result.waitingSeconds += end - start;
  result.computeSeconds = result.iterationSeconds - result.waitingSeconds;
  double exposed = 0;
  for (const auto& [sendStart, sendEnd] : sends) {
    for (const auto& [waitStart, waitEnd] : waits[reported]) {
      exposed += overlapSeconds(sendStart, sendEnd, waitStart, waitEnd);
    }
  }
  for (double seconds : sendSeconds) result.communicationSeconds += seconds;
  for (const BucketTiming& late : beforeForward) {
    result.communicationSeconds += late.endSeconds - late.startSeconds;
  }
  if (!communicates) result.communicationSeconds = 0;
  result.negotiationSeconds = negotiationSeconds * static_cast<double>(timings.size());
  result.overlappedSeconds = std::max(0.0, result.communicationSeconds - exposed);

  result.singleWorkerIterationSeconds = profile.computeSeconds();
  result.speedup = result.iterationSeconds > 0
                       ? workers * result.singleWorkerIterationSeconds / result.iterationSeconds
                       : static_cast<double>(workers);
  result.scalingEfficiency = result.speedup / workers;
  result.batchPerWorker =
      options.batchPerWorker > 0 ? options.batchPerWorker : profile.batchPerWorker;
  if (result.batchPerWorker > 0 && result.iterationSeconds > 0) {
    result.imagesPerSecond =
        static_cast<double>(workers * result.batchPerWorker) / result.iterationSeconds;
  }
  return result;
}

void writeSimTrace(const std::string& path, const SimResult& result, const std::string& label) {
  constexpr int kProcess = 0;
  nlohmann::json events = nlohmann::json::array();
  const char* rowNames[] = {"compute", "communication"};
  for (int row = 0; row < 2; ++row) {
    events.push_back({{"ph", "M"},
                      {"name", "thread_name"},
                      {"pid", kProcess},
                      {"tid", row},
                      {"args", {{"name", rowNames[row]}}}});
  }
  events.push_back(
      {{"ph", "M"}, {"name", "process_name"}, {"pid", kProcess}, {"args", {{"name", label}}}});
  for (const SimEvent& event : result.trace) {
    nlohmann::json args = {{"step", event.step}};
    if (event.bytes > 0) args["bytes"] = event.bytes;
    events.push_back({{"ph", "X"},
                      {"name", event.name},
                      {"cat", event.category},
                      {"pid", kProcess},
                      {"tid", static_cast<int>(event.row)},
                      {"ts", 1e6 * event.startSeconds},
                      {"dur", 1e6 * (event.endSeconds - event.startSeconds)},
                      {"args", std::move(args)}});
  }
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary);
    IMERGE_CHECK(out.good(), "simulated trace: cannot write ", temporary, ": ",
                 std::strerror(errno));
    out << nlohmann::json{{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}}.dump()
        << "\n";
    IMERGE_CHECK(out.good(), "simulated trace: writing ", temporary,
                 " failed: ", std::strerror(errno));
  }
  IMERGE_CHECK(std::rename(temporary.c_str(), path.c_str()) == 0, "simulated trace: cannot rename ",
               temporary, " to ", path, ": ", std::strerror(errno));
}

}  // namespace imerge::distributed
