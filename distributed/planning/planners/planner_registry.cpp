// makePlanner, strategyNames and beliefModelFor (contracts in distributed/planning/planner.h),
// and the helpers the planners share (distributed/planning/planners/planners.h).
#include <algorithm>
#include <limits>
#include <memory>

#include "core/error.h"
#include "distributed/planning/belief.h"
#include "distributed/planning/planners/planners.h"

namespace imerge::distributed {

const std::vector<std::string>& strategyNames() {
  static const std::vector<std::string> names = {"default", "wfbp",   "fusion", "priority",
                                                 "mgwfbp",  "imerge", "ddp",    "imerge-overlap"};
  return names;
}

std::unique_ptr<Planner> makePlanner(const std::string& strategy, const PlannerOptions& options) {
  if (strategy == "default") return std::make_unique<DefaultPlanner>();
  if (strategy == "wfbp") return std::make_unique<WfbpPlanner>();
  if (strategy == "fusion") return std::make_unique<FusionPlanner>(options.fusionBytes);
  if (strategy == "priority") return std::make_unique<PriorityPlanner>(options.sliceElements);
  if (strategy == "mgwfbp") return std::make_unique<MgwfbpPlanner>();
  if (strategy == "imerge") return std::make_unique<ImergePlanner>();
  if (strategy == "imerge-overlap")
    return std::make_unique<ImergeOverlapPlanner>(options.sliceElements);
  if (strategy == "ddp") {
    return std::make_unique<DdpPlanner>(options.ddpFirstBucketBytes, options.ddpBucketBytes);
  }
  std::string list;
  for (const std::string& name : strategyNames()) list += (list.empty() ? "" : ", ") + name;
  IMERGE_FAIL("unknown distributed strategy '", strategy, "'; choose one of: ", list);
}

namespace planning {

void checkWorkers(const std::string& planner, int workers) {
  IMERGE_CHECK(workers >= 1, planner, " planner: workers must be at least 1, not ", workers);
}

size_t sliceBytesOf(const std::string& planner, size_t sliceElements) {
  constexpr size_t kFloat32Bytes = 4;
  IMERGE_CHECK(
      sliceElements >= 1 && sliceElements <= std::numeric_limits<size_t>::max() / kFloat32Bytes,
      planner, " planner: --slice-elems must be at least 1 element, not ", sliceElements);
  return sliceElements * kFloat32Bytes;
}

std::vector<SliceRange> sliceRanges(size_t bytes, size_t sliceBytes) {
  std::vector<SliceRange> ranges;
  size_t offset = 0;
  do {
    ranges.push_back({offset, std::min(sliceBytes, bytes - offset)});
    offset += ranges.back().bytes;
  } while (offset < bytes);
  return ranges;
}

Bucket wholeTensorBucket(const std::vector<TensorInfo>& tensors, size_t first, size_t last,
                         int bucketIndex) {
  Bucket bucket;
  bucket.tensors.reserve(last - first + 1);
  for (size_t k = first; k <= last; ++k) {
    bucket.tensors.push_back(k);
    bucket.bytes += tensors[k].bytes;
  }
  bucket.priority = bucketIndex;
  return bucket;
}

Plan bucketPerTensor(const std::vector<TensorInfo>& tensors) {
  Plan plan;
  plan.buckets.reserve(tensors.size());
  for (size_t k = 0; k < tensors.size(); ++k) {
    plan.buckets.push_back(wholeTensorBucket(tensors, k, k, static_cast<int>(k)));
  }
  return plan;
}

Plan planFromGroupStarts(const std::vector<TensorInfo>& tensors,
                         const std::vector<size_t>& groupStarts) {
  Plan plan;
  plan.buckets.reserve(groupStarts.size());
  for (size_t g = 0; g < groupStarts.size(); ++g) {
    const size_t last = g + 1 < groupStarts.size() ? groupStarts[g + 1] - 1 : tensors.size() - 1;
    plan.buckets.push_back(wholeTensorBucket(tensors, groupStarts[g], last, static_cast<int>(g)));
  }
  return plan;
}

}  // namespace planning
std::shared_ptr<const CommModel> beliefModelFor(const std::string& strategy,
                                                const std::vector<CommSample>& samples) {
  return beliefModel(defaultBeliefSource(strategy), samples, nullptr);
}

}  // namespace imerge::distributed
