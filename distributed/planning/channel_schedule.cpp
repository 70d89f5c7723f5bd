// One-channel schedules (contract in channel_schedule.h). The priority schedule picks the next
// bucket by a linear scan over the ready ones: O(B^2) for B buckets, which stays far below a
// millisecond for the few hundred slices real models produce, and keeps the tie rule obvious.
#include "distributed/planning/channel_schedule.h"

#include <algorithm>
#include <limits>

#include "core/error.h"

namespace imerge::distributed {

double backwardPartSeconds(const Bucket& bucket, size_t index, const CommModel& allReduce,
                           const CommModel* reduceScatter, int workers) {
  switch (bucket.schedule) {
    case Bucket::Schedule::Backward:
      return allReduce.seconds(bucket.bytes, workers);
    case Bucket::Schedule::Split:
      IMERGE_CHECK(reduceScatter != nullptr, "bucket ", index,
                   " is split, but no reduce-scatter cost was given to charge it");
      return reduceScatter->seconds(bucket.bytes, workers);
    case Bucket::Schedule::BeforeForward:
      return 0;
  }
  IMERGE_FAIL("bucket ", index, " has an unknown schedule");
}

std::vector<BucketTiming> scheduleOnOneChannel(const Plan& plan,
                                               const std::vector<TensorInfo>& tensors,
                                               const CommModel& model, int workers,
                                               const CommModel* reduceScatter) {
  IMERGE_CHECK(workers >= 1, "scheduleOnOneChannel: workers must be at least 1, not ", workers);
  const std::vector<double> ready = readyTimes(tensors);
  const double backwardEnd = ready.empty() ? 0 : ready.back();

  std::vector<BucketTiming> timings(plan.buckets.size());
  for (size_t b = 0; b < plan.buckets.size(); ++b) {
    double bucketReady = 0;
    for (size_t tensor : plan.buckets[b].tensors) {
      IMERGE_CHECK(tensor < tensors.size(), "scheduleOnOneChannel: bucket ", b, " names tensor ",
                   tensor, ", but there are only ", tensors.size(), " tensors");
      bucketReady = std::max(bucketReady, ready[tensor]);
    }
    timings[b].readySeconds = plan.startAfterBackward ? backwardEnd : bucketReady;
  }

  double channelFree = 0;
  auto run = [&](size_t b) {
    BucketTiming& timing = timings[b];
    timing.startSeconds = std::max(channelFree, timing.readySeconds);
    timing.endSeconds = timing.startSeconds +
                        backwardPartSeconds(plan.buckets[b], b, model, reduceScatter, workers);
    channelFree = timing.endSeconds;
  };

  if (plan.order == LaunchOrder::Fifo) {
    for (size_t b = 0; b < plan.buckets.size(); ++b) run(b);
    return timings;
  }

  std::vector<bool> launched(plan.buckets.size(), false);
  for (size_t done = 0; done < plan.buckets.size(); ++done) {
    // The earliest moment anything can start: now, or when the next bucket becomes ready.
    double earliestReady = std::numeric_limits<double>::infinity();
    for (size_t b = 0; b < plan.buckets.size(); ++b) {
      if (!launched[b]) earliestReady = std::min(earliestReady, timings[b].readySeconds);
    }
    const double startAt = std::max(channelFree, earliestReady);
    size_t next = plan.buckets.size();
    for (size_t b = 0; b < plan.buckets.size(); ++b) {
      if (launched[b] || timings[b].readySeconds > startAt) continue;
      if (next == plan.buckets.size() || plan.buckets[b].priority < plan.buckets[next].priority) {
        next = b;
      }
    }
    launched[next] = true;
    run(next);
  }
  return timings;
}

double fifoFinishTime(const Plan& plan, const std::vector<TensorInfo>& tensors,
                      const CommModel& model, int workers) {
  double finish = 0;
  for (const BucketTiming& timing : scheduleOnOneChannel(plan, tensors, model, workers)) {
    finish = std::max(finish, timing.endSeconds);
  }
  return finish;
}

}  // namespace imerge::distributed
