// `priority` (P3, ByteScheduler): small slices so that a high-priority tensor never waits long
// behind a big low-priority one; the priority is the forward position, because the next
// forward needs layer 0's update first and the last layer's last.
#include <algorithm>
#include <limits>

#include "core/error.h"
#include "distributed/planning/planners/planners.h"

namespace imerge::distributed {
namespace {
constexpr size_t kFloat32Bytes = 4;  // --slice-elems counts float32 elements
}  // namespace

PriorityPlanner::PriorityPlanner(size_t sliceElements) : sliceElements_(sliceElements) {
  IMERGE_CHECK(
      sliceElements_ >= 1 && sliceElements_ <= std::numeric_limits<size_t>::max() / kFloat32Bytes,
      "priority planner: --slice-elems must be at least 1 element, not ", sliceElements_);
}

Plan PriorityPlanner::plan(const std::vector<TensorInfo>& tensors, const CommModel&,
                           int workers) const {
  planning::checkWorkers(name(), workers);
  IMERGE_CHECK(tensors.size() <= static_cast<size_t>(std::numeric_limits<int>::max()),
               "priority planner: ", tensors.size(), " tensors do not fit an int priority");
  const size_t sliceBytes = sliceElements_ * kFloat32Bytes;
  Plan plan;
  plan.order = LaunchOrder::Priority;
  plan.overlapWithNextForward = true;
  for (size_t k = 0; k < tensors.size(); ++k) {
    const int forwardPosition = static_cast<int>(tensors.size() - 1 - k);
    size_t offset = 0;
    do {  // at least one bucket, so a zero-byte tensor is still reduced (as an empty whole)
      Bucket slice;
      slice.tensors = {k};
      slice.sliceOffsetBytes = offset;
      slice.bytes = std::min(sliceBytes, tensors[k].bytes - offset);
      slice.priority = forwardPosition;
      plan.buckets.push_back(std::move(slice));
      offset += plan.buckets.back().bytes;
    } while (offset < tensors[k].bytes);
  }
  return plan;
}

}  // namespace imerge::distributed
