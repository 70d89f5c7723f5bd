// `mgwfbp`: MG-WFBP's greedy merge (Shi et al., INFOCOM'19 / TPDS'21), as docs/design.md states it.
//
// Only k's group and those before it decide s_k and e_k on a FIFO channel, and merging k+1
// changes only k's group, so "recompute the schedule" is an update of the open group's start
// and end: O(L) model evaluations in all.
#include <algorithm>

#include "distributed/planning/comm_model.h"
#include "distributed/planning/planners/planners.h"

namespace imerge::distributed {

Plan MgwfbpPlanner::plan(const std::vector<TensorInfo>& tensors, const CommModel& model,
                         int workers) const {
  planning::checkWorkers(name(), workers);
  if (tensors.empty()) return {};
  const std::vector<double> ready = readyTimes(tensors);
  // The startup a merge saves: the model's cost at 0 bytes (a linear model's alpha).
  const double startup = model.piecesAt(workers).front().latencySeconds;

  std::vector<size_t> groupStarts = {0};
  double channelFreeBeforeGroup = 0;  // when the groups before the open one have all ended
  size_t groupBytes = tensors[0].bytes;
  double groupStart = ready[0];                                       // s_k
  double groupEnd = groupStart + model.seconds(groupBytes, workers);  // e_k
  for (size_t k = 0; k + 1 < tensors.size(); ++k) {
    const double nextReady = ready[k + 1];  // r_{k+1}
    const bool merge =
        nextReady < groupEnd && (groupStart > nextReady || nextReady - groupStart < startup);
    if (merge) {
      // The group now waits for k+1, which is ready last.
      groupBytes += tensors[k + 1].bytes;
      groupStart = std::max(channelFreeBeforeGroup, nextReady);
    } else {
      groupStarts.push_back(k + 1);
      channelFreeBeforeGroup = groupEnd;
      groupBytes = tensors[k + 1].bytes;
      groupStart = std::max(channelFreeBeforeGroup, nextReady);
    }
    groupEnd = groupStart + model.seconds(groupBytes, workers);
  }
  return planning::planFromGroupStarts(tensors, groupStarts);
}

}  // namespace imerge::distributed
