// Planners: one per strategy of docs/design.md section 4, each a pure function of (tensor sizes and
// backward times, communication model, workers) -> Plan.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "distributed/planning/collective_costs.h"
#include "distributed/planning/comm_model.h"
#include "distributed/planning/compute_profile.h"
#include "distributed/planning/plan.h"

namespace imerge::distributed {

class Planner {
 public:
  virtual ~Planner() = default;
  virtual std::string name() const = 0;
  // `tensors` are in backward order; `model` is what this strategy believes communication costs.
  virtual Plan plan(const std::vector<TensorInfo>& tensors, const CommModel& model,
                    int workers) const = 0;
  // The full inputs: the profile's forward, optimizer and other times beside its tensors, and
  // what the split collectives cost. Only `imerge-overlap` reads them; the others plan from
  // profile.tensors and costs.allReduce alone (this default).
  virtual Plan plan(const ComputeProfile& profile, const CollectiveCosts& costs,
                    int workers) const {
    return plan(profile.tensors, *costs.allReduce, workers);
  }
  // True when the plan depends on backward times or the model, so it must be rebuilt once they
  // have been measured (mgwfbp, imerge); false when it depends on sizes only.
  virtual bool usesTimings() const = 0;
};

struct PlannerOptions {
  size_t fusionBytes = size_t{64} << 20;         // `fusion`: --fusion-bytes
  size_t sliceElements = size_t{1} << 20;        // `priority`: --slice-elems (float32 elements)
  size_t ddpFirstBucketBytes = size_t{1} << 20;  // `ddp`: PyTorch's first bucket, 1 MiB
  size_t ddpBucketBytes = size_t{25} << 20;      // `ddp`: bucket_cap_mb = 25
};

// "default", "wfbp", "fusion", "priority", "mgwfbp", "imerge", "ddp", "imerge-overlap"; anything
// else throws an imerge::Error that lists the names.
std::unique_ptr<Planner> makePlanner(const std::string& strategy, const PlannerOptions& options);
// The strategies, as makePlanner, DataParallel, imerge-train --dist and imerge-scale know them.
const std::vector<std::string>& strategyNames();

// The model a strategy plans with when it measures its own samples (DataParallel): its default
// belief of distributed/planning/belief.h, fitted from `samples` ("mgwfbp": the line over
// 32 KiB-2 MiB; "imerge": the piecewise fit; the rest, whose plans ignore it: the line over every
// sample). An unknown strategy throws imerge::Error listing the names.
std::shared_ptr<const CommModel> beliefModelFor(const std::string& strategy,
                                                const std::vector<CommSample>& samples);

}  // namespace imerge::distributed
