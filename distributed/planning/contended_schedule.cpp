// The contended one-channel schedule (contract in contended_schedule.h): an event loop over
// two activities whose rates are constant between events (a tensor's gradient becoming final,
// an all-reduce ending), so each step advances both exactly to the nearer event.
#include "distributed/planning/contended_schedule.h"

#include <algorithm>
#include <limits>

#include "core/error.h"

namespace imerge::distributed {

ContendedSchedule scheduleBesideCompute(const Plan& plan, const std::vector<TensorInfo>& tensors,
                                        const CommModel& idle, const Contention& contention,
                                        bool computesAfterBackward, int workers,
                                        const CommModel* reduceScatter) {
  IMERGE_CHECK(contention.besideCompute != nullptr,
               "scheduleBesideCompute: no cost beside compute was given");
  IMERGE_CHECK(contention.computeSlowdown >= 1, "scheduleBesideCompute: the compute slowdown ",
               contention.computeSlowdown,
               " is below 1; compute does not speed up beside an "
               "all-reduce");
  IMERGE_CHECK(workers >= 1, "scheduleBesideCompute: workers must be at least 1, not ", workers);
  constexpr double kNever = std::numeric_limits<double>::infinity();
  const size_t bucketCount = plan.buckets.size();

  // A bucket is ready when its last tensor is; count what each still waits for.
  std::vector<size_t> unfinishedTensors(bucketCount, 0);
  std::vector<std::vector<size_t>> bucketsOfTensor(tensors.size());
  for (size_t b = 0; b < bucketCount; ++b) {
    for (size_t tensor : plan.buckets[b].tensors) {
      IMERGE_CHECK(tensor < tensors.size(), "scheduleBesideCompute: bucket ", b, " names tensor ",
                   tensor, ", but there are only ", tensors.size(), " tensors");
      ++unfinishedTensors[b];
      bucketsOfTensor[tensor].push_back(b);
    }
  }

  ContendedSchedule schedule;
  schedule.buckets.resize(bucketCount);
  schedule.readySeconds.assign(tensors.size(), 0.0);
  std::vector<bool> ready(bucketCount, false), launched(bucketCount, false);
  auto markReady = [&](size_t b, double now) {
    ready[b] = true;
    schedule.buckets[b].readySeconds = now;
  };

  double now = 0;
  size_t computing = 0;  // the tensor whose gradient backward is computing
  double workLeft = tensors.empty() ? 0 : tensors[0].backwardSeconds;  // at full speed
  bool backwardDone = tensors.empty();
  size_t onChannel = bucketCount;  // none
  double fractionLeft = 0;         // of the all-reduce on the channel
  size_t nextInPlanOrder = 0, launchedCount = 0;
  if (backwardDone) {
    for (size_t b = 0; b < bucketCount; ++b) markReady(b, 0);
  }

  while (true) {
    // Gradients that are final now (a tensor of no backward time finishes at once).
    while (!backwardDone && workLeft <= 0) {
      schedule.readySeconds[computing] = now;
      if (!plan.startAfterBackward) {
        for (size_t b : bucketsOfTensor[computing]) {
          if (--unfinishedTensors[b] == 0) markReady(b, now);
        }
      }
      if (++computing == tensors.size()) {
        backwardDone = true;
        if (plan.startAfterBackward) {
          for (size_t b = 0; b < bucketCount; ++b) markReady(b, now);
        }
      } else {
        workLeft = tensors[computing].backwardSeconds;
      }
    }
    // A free channel takes the next bucket: plan order, or the ready one of lowest priority.
    if (onChannel == bucketCount) {
      if (plan.order == LaunchOrder::Fifo) {
        if (nextInPlanOrder < bucketCount && ready[nextInPlanOrder]) onChannel = nextInPlanOrder++;
      } else {
        for (size_t b = 0; b < bucketCount; ++b) {
          if (!ready[b] || launched[b]) continue;
          if (onChannel == bucketCount ||
              plan.buckets[b].priority < plan.buckets[onChannel].priority) {
            onChannel = b;
          }
        }
      }
      if (onChannel != bucketCount) {
        launched[onChannel] = true;
        ++launchedCount;
        schedule.buckets[onChannel].startSeconds = now;
        fractionLeft = 1;
      }
    }
    if (onChannel == bucketCount && backwardDone) {
      IMERGE_CHECK(launchedCount == bucketCount,
                   "scheduleBesideCompute: ", bucketCount - launchedCount,
                   " buckets never became ready");
      break;
    }

    // Advance both activities to the nearer of their next events.
    const bool computes = !backwardDone || computesAfterBackward;
    const double computeRate = onChannel == bucketCount ? 1.0 : 1.0 / contention.computeSlowdown;
    double cost = 0;
    if (onChannel != bucketCount) {
      const Bucket& bucket = plan.buckets[onChannel];
      cost = (computes ? *contention.besideCompute : idle).seconds(bucket.bytes, workers);
      const double whole = idle.seconds(bucket.bytes, workers);
      if (bucket.schedule != Bucket::Schedule::Backward && whole > 0) {
        cost *= backwardPartSeconds(bucket, onChannel, idle, reduceScatter, workers) / whole;
      }
    }
    const double untilTensor = backwardDone ? kNever : workLeft / computeRate;
    const double untilBucket = onChannel == bucketCount ? kNever : fractionLeft * cost;
    const double step = std::min(untilTensor, untilBucket);
    now += step;
    if (!backwardDone) workLeft = step == untilTensor ? 0.0 : workLeft - step * computeRate;
    if (onChannel != bucketCount) {
      if (step == untilBucket) {
        schedule.buckets[onChannel].endSeconds = now;
        onChannel = bucketCount;
      } else {
        fractionLeft -= step / cost;
      }
    }
  }
  return schedule;
}

}  // namespace imerge::distributed
