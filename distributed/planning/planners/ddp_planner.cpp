// `ddp` (PyTorch DistributedDataParallel's gradient buckets). The rule is in planners.h: a tensor
// joins the open bucket, and the bucket closes once its bytes reach the cap, so a bucket exceeds
// the cap by at most its last tensor (PyTorch's compute_bucket_assignment_by_size does the
// same). The first bucket's cap is smaller, so the first all-reduce starts early in backward.
#include "core/error.h"
#include "distributed/planning/planners/planners.h"

namespace imerge::distributed {

DdpPlanner::DdpPlanner(size_t firstBucketBytes, size_t bucketBytes)
    : firstBucketBytes_(firstBucketBytes), bucketBytes_(bucketBytes) {
  IMERGE_CHECK(firstBucketBytes_ >= 1 && bucketBytes_ >= 1,
               "ddp planner: bucket caps must be at least 1 byte (first ", firstBucketBytes_,
               ", others ", bucketBytes_, ")");
}

Plan DdpPlanner::plan(const std::vector<TensorInfo>& tensors, const CommModel&, int workers) const {
  planning::checkWorkers(name(), workers);
  std::vector<size_t> groupStarts;
  size_t openBytes = 0;
  bool open = false;
  for (size_t k = 0; k < tensors.size(); ++k) {
    if (!open) {
      groupStarts.push_back(k);
      openBytes = 0;
      open = true;
    }
    openBytes += tensors[k].bytes;
    const size_t cap = groupStarts.size() == 1 ? firstBucketBytes_ : bucketBytes_;
    if (openBytes >= cap) open = false;
  }
  return planning::planFromGroupStarts(tensors, groupStarts);
}

}  // namespace imerge::distributed
