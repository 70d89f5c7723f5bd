// Planners: one per strategy of docs/design.md section 4, each a pure function of (tensor sizes and
// backward times, communication model, workers) -> Plan.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "distributed/planning/comm_model.h"
#include "distributed/planning/plan.h"

namespace imerge::distributed {

class Planner {
 public:
  virtual ~Planner() = default;
  virtual std::string name() const = 0;
  // `tensors` are in backward order; `model` is what this strategy believes communication costs.
  virtual Plan plan(const std::vector<TensorInfo>& tensors, const CommModel& model,
                    int workers) const = 0;
  // True when the plan depends on backward times or the model, so it must be rebuilt once they
  // have been measured (mgwfbp, imerge); false when it depends on sizes only.
  virtual bool usesTimings() const = 0;
};

struct PlannerOptions {
  size_t fusionBytes = size_t{64} << 20;   // `fusion`: --fusion-bytes
  size_t sliceElements = size_t{1} << 20;  // `priority`: --slice-elems (float32 elements)
};

// "default", "wfbp", "fusion", "priority", "mgwfbp", "imerge"; anything else throws an
// imerge::Error that lists the names.
std::unique_ptr<Planner> makePlanner(const std::string& strategy, const PlannerOptions& options);
const std::vector<std::string>& strategyNames();

// The model a strategy plans with: the piecewise fit for "imerge", the least-squares line for
// "mgwfbp" and for the strategies whose plans ignore the model ("default", "wfbp", "fusion",
// "priority"). An unknown strategy throws imerge::Error listing the names.
std::unique_ptr<CommModel> beliefModelFor(const std::string& strategy,
                                          const std::vector<CommSample>& samples);

}  // namespace imerge::distributed
