// `imerge`: the optimal contiguous grouping for a FIFO channel by dynamic programming.
//
// f(j) is the earliest time the first j tensors can all be reduced; the last group i..j starts
// at max(f(i-1), r_j) because it is ready with its last tensor and the channel serves groups in
// order. The end of a group never decreases when the prefix ends later, so the best prefix is
// the earliest one and the DP is exact (it equals exhaustive search over all 2^(L-1) groupings;
// the tests check that). O(L^2) model evaluations: about 20,000 for L = 200.
#include <algorithm>
#include <cmath>
#include <limits>

#include "distributed/planning/planners/planners.h"

namespace imerge::distributed {

Plan ImergePlanner::plan(const std::vector<TensorInfo>& tensors, const CommModel& model,
                         int workers) const {
  planning::checkWorkers(name(), workers);
  const size_t count = tensors.size();
  if (count == 0) return {};
  const std::vector<double> ready = readyTimes(tensors);
  std::vector<size_t> prefixBytes(count + 1, 0);  // prefixBytes[j]: bytes of tensors 0..j-1
  for (size_t k = 0; k < count; ++k) prefixBytes[k + 1] = prefixBytes[k] + tensors[k].bytes;

  // finish[j], buckets[j]: the best end time of the first j tensors, and its bucket count;
  // lastGroupStart[j]: the first tensor (1-based i) of that prefix's last group.
  std::vector<double> finish(count + 1, 0);
  std::vector<size_t> buckets(count + 1, 0);
  std::vector<size_t> lastGroupStart(count + 1, 0);
  for (size_t j = 1; j <= count; ++j) {
    double bestFinish = std::numeric_limits<double>::infinity();
    size_t bestBuckets = 0;
    for (size_t i = 1; i <= j; ++i) {
      const double start = std::max(finish[i - 1], ready[j - 1]);
      const double end = start + model.seconds(prefixBytes[j] - prefixBytes[i - 1], workers);
      const size_t candidateBuckets = buckets[i - 1] + 1;
      // Rounding must not decide between equal groupings: within a relative 1e-12 the one
      // with fewer buckets wins, and among equals the first found (the smallest i) stays.
      const double tolerance = 1e-12 * std::fabs(bestFinish);
      const bool better = i == 1 || end < bestFinish - tolerance ||
                          (end <= bestFinish + tolerance && candidateBuckets < bestBuckets);
      if (better) {
        bestFinish = end;
        bestBuckets = candidateBuckets;
        lastGroupStart[j] = i;
      }
    }
    finish[j] = bestFinish;
    buckets[j] = bestBuckets;
  }

  std::vector<size_t> groupStarts(buckets[count]);
  for (size_t j = count, g = buckets[count]; j > 0; j = lastGroupStart[j] - 1) {
    groupStarts[--g] = lastGroupStart[j] - 1;  // back to 0-based tensor indices
  }
  return planning::planFromGroupStarts(tensors, groupStarts);
}

}  // namespace imerge::distributed
