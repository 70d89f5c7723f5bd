// `fusion` (Horovod tensor fusion with a static threshold). The closing rule is in planners.h:
// join while the bucket stays within fusionBytes, so only a single oversized tensor ever makes
// a bucket larger than the threshold. The plan depends on sizes alone.
#include "core/error.h"
#include "distributed/planning/planners/planners.h"

namespace imerge::distributed {

FusionPlanner::FusionPlanner(size_t fusionBytes) : fusionBytes_(fusionBytes) {
  IMERGE_CHECK(fusionBytes_ >= 1, "fusion planner: --fusion-bytes must be at least 1 byte");
}

Plan FusionPlanner::plan(const std::vector<TensorInfo>& tensors, const CommModel&,
                         int workers) const {
  planning::checkWorkers(name(), workers);
  std::vector<size_t> groupStarts;
  size_t openBytes = 0;
  for (size_t k = 0; k < tensors.size(); ++k) {
    // Written as a subtraction so a huge tensor cannot overflow the sum.
    const bool fits = !groupStarts.empty() && openBytes <= fusionBytes_ &&
                      tensors[k].bytes <= fusionBytes_ - openBytes;
    if (!fits) {
      groupStarts.push_back(k);
      openBytes = 0;
    }
    openBytes += tensors[k].bytes;
  }
  return planning::planFromGroupStarts(tensors, groupStarts);
}

}  // namespace imerge::distributed
