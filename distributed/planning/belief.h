// What each strategy believes communication costs: the explicit, documented choice of the model
// a planner plans with (the simulator charges the truth; see simulator.h), per strategy, with the
// original system's choice as the default.
//
//   strategy             sources (the default first)
//   mgwfbp               linear-32k-2m: T(M) = a + bM by least squares over the samples of
//                                       32 KiB to 2 MiB only, as the public MG-WFBP code fits
//                                       it (per worker count, so its a grows with the workers)
//                        linear-all:    the same line over every sample
//                        piecewise, truth
//   imerge,              piecewise:     fitPiecewise over every sample (the IMerge paper's
//   imerge-overlap                      model: flat below a breakpoint, linear above; for
//                                       imerge-overlap also its halves, collective_costs.h)
//                        truth:         the cluster's cost exactly as given
//                        linear-32k-2m, linear-all
//   fusion               horovod-64mib: a fixed 64 MiB threshold (Horovod before 0.21)
//                        horovod-128mib: 128 MiB (HOROVOD_FUSION_THRESHOLD since 0.21)
//   default, wfbp, priority, ddp    sizes-only: their plans ignore every cost model
//
// "Samples" are what the planner could have measured: imerge-commbench's samples at that worker
// count when the cluster was measured, otherwise the cluster's cost sampled over
// imerge-commbench's sizes (sweepMeasurementSizes, 4 B to 256 MiB).
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "distributed/planning/comm_model.h"

namespace imerge::distributed {

// MG-WFBP's regression range, in bytes (both ends included).
inline constexpr size_t kMgwfbpFitMinBytes = size_t{32} << 10;
inline constexpr size_t kMgwfbpFitMaxBytes = size_t{2} << 20;

// The sources `strategy` accepts, its default first; an unknown strategy throws imerge::Error.
const std::vector<std::string>& beliefSourcesFor(const std::string& strategy);
const std::string& defaultBeliefSource(const std::string& strategy);
// One line for reports and --help: "least squares a + bM over 32 KiB-2 MiB (MG-WFBP's code)".
std::string describeBeliefSource(const std::string& source);

// The beliefs --belief STRATEGY=SOURCE[,...] chooses (a strategy it leaves out keeps its
// default). Refuses, naming the flag and the entry, an entry without '=', an unknown strategy,
// a source the strategy does not accept (listing those it does) and a strategy given twice.
std::map<std::string, std::string> parseBeliefFlag(const std::vector<std::string>& entries,
                                                   const std::string& flag = "--belief");

// The fusion threshold a fusion belief stands for (horovod-64mib: 64 MiB, horovod-128mib:
// 128 MiB).
size_t fusionThresholdBytes(const std::string& source);

// The model a cost-based source plans with at `workers`: fitted from `samples` (all at one
// worker count), or `truth` itself for "truth". "sizes-only" and the fusion thresholds give a
// least-squares line over every sample (their plans ignore it; it is what reports show). An
// imerge::Error names the source when its samples cannot be fitted (linear-32k-2m with fewer
// than two distinct sizes in its range, say).
std::shared_ptr<const CommModel> beliefModel(const std::string& source,
                                             const std::vector<CommSample>& samples,
                                             std::shared_ptr<const CommModel> truth);

}  // namespace imerge::distributed
