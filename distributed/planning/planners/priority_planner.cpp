// `priority` (P3, ByteScheduler): small slices so that a high-priority tensor never waits long
// behind a big low-priority one; the priority is the forward position, because the next
// forward needs layer 0's update first and the last layer's last.
#include <algorithm>
#include <limits>

#include "core/error.h"
#include "distributed/planning/planners/planners.h"

namespace imerge::distributed {
PriorityPlanner::PriorityPlanner(size_t sliceElements)
    : sliceBytes_(planning::sliceBytesOf("priority", sliceElements)) {}

Plan PriorityPlanner::plan(const std::vector<TensorInfo>& tensors, const CommModel&,
                           int workers) const {
  planning::checkWorkers(name(), workers);
  IMERGE_CHECK(tensors.size() <= static_cast<size_t>(std::numeric_limits<int>::max()),
               "priority planner: ", tensors.size(), " tensors do not fit an int priority");
  Plan plan;
  plan.order = LaunchOrder::Priority;
  plan.overlapWithNextForward = true;
  for (size_t k = 0; k < tensors.size(); ++k) {
    const int forwardPosition = static_cast<int>(tensors.size() - 1 - k);
    for (const planning::SliceRange& range : planning::sliceRanges(tensors[k].bytes, sliceBytes_)) {
      Bucket slice;
      slice.tensors = {k};
      slice.sliceOffsetBytes = range.offsetBytes;
      slice.bytes = range.bytes;
      slice.priority = forwardPosition;
      plan.buckets.push_back(std::move(slice));
    }
  }
  return plan;
}

}  // namespace imerge::distributed
