// `wfbp` (Poseidon's wait-free backpropagation): every tensor is its own all-reduce, launched
// the moment its gradient is final, so communication overlaps the rest of backward; FIFO on one
// channel keeps every rank's launch order identical.
#include "distributed/planning/planners/planners.h"

namespace imerge::distributed {

Plan WfbpPlanner::plan(const std::vector<TensorInfo>& tensors, const CommModel&,
                       int workers) const {
  planning::checkWorkers(name(), workers);
  return planning::bucketPerTensor(tensors);
}

}  // namespace imerge::distributed
