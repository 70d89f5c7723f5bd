// The device breakdown's arithmetic (what each figure means is in the header).
#include "distributed/runtime/device_step_times.h"

#include <algorithm>
#include <chrono>

namespace imerge::distributed {

namespace {
CommClock::time_point at(CommClock::time_point anchor, double seconds) {
  return anchor +
         std::chrono::duration_cast<CommClock::duration>(std::chrono::duration<double>(seconds));
}
}  // namespace

DeviceStepFigures deviceStepFigures(const DeviceStepTimes& times,
                                    CommClock::time_point backwardStart) {
  DeviceStepFigures figures;
  // Backward ends on the device no earlier than it starts; without its mark (a step cut short)
  // nothing is known to have overlapped it.
  const double backwardEnd = times.backwardEnd.value_or(0.0);
  double lastEnd = backwardEnd;
  for (const DeviceBucketTimes& bucket : times.buckets) {
    const double start = std::min(bucket.start, bucket.end);
    const double end = bucket.end;
    figures.intervals.push_back(
        {at(backwardStart, start), at(backwardStart, end), bucket.bucket, bucket.bytes});
    figures.communicationSeconds += end - start;
    // The part of this collective before backward ended ran beside it.
    figures.overlappedSeconds += std::max(0.0, std::min(end, backwardEnd) - start);
    if (times.joinedAtBackwardEnd) lastEnd = std::max(lastEnd, end);
  }
  figures.waitingSeconds = lastEnd - backwardEnd;
  if (figures.waitingSeconds > 0) {
    figures.waits.push_back({at(backwardStart, backwardEnd), at(backwardStart, lastEnd), 0, 0});
  }
  if (times.forwardStart) figures.forwardSeconds = std::max(0.0, -*times.forwardStart);
  if (times.stepEnd) {
    if (times.forwardStart) {
      figures.computeSeconds =
          std::max(0.0, *times.stepEnd - *times.forwardStart - figures.waitingSeconds);
    }
    figures.optimizerSeconds = std::max(0.0, *times.stepEnd - lastEnd);
  }
  return figures;
}

}  // namespace imerge::distributed
