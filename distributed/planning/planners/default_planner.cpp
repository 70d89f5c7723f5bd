// `default`: plain synchronous SGD, the no-overlap baseline. The same buckets as wfbp; the
// difference is only when they may start (after backward), which the Reducer and the simulator
// read from plan.startAfterBackward.
#include "distributed/planning/planners/planners.h"

namespace imerge::distributed {

Plan DefaultPlanner::plan(const std::vector<TensorInfo>& tensors, const CommModel&,
                          int workers) const {
  planning::checkWorkers(name(), workers);
  Plan plan = planning::bucketPerTensor(tensors);
  plan.startAfterBackward = true;
  return plan;
}

}  // namespace imerge::distributed
