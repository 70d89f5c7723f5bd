// Contention as a study input (imerge-scale --contention FILE): the output of
// `imerge-commbench --beside-compute`, its samples what an all-reduce cost while every rank's
// cores computed, its compute_slowdown column how much less compute got done meanwhile.
// The samples are fitted per worker count as --cluster's measured samples are (fitMeasuredCluster,
// with its refusal of a fit that over-charges them); the slowdown at a count is the median over
// its sizes. A count the file lacks takes the cost ring-scaled from the nearest count it has
// (cluster_profile.h) and that count's slowdown.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "distributed/planning/cluster_profile.h"
#include "distributed/planning/contended_schedule.h"

namespace imerge::distributed {

class MeasuredContention {
 public:
  // Errors name `flag` and the file: a file without a compute_slowdown column (measured
  // without --beside-compute), a count whose median slowdown is below 1 by more than noise
  // (below 0.9). Single rows below that are noise the median absorbs.
  static MeasuredContention load(const std::string& path, const std::string& flag);

  // The contention at `workers`. A compute profile measured in a run that communicated
  // already holds the compute slowdown: `profileSlowedDown` then gives 1.
  Contention at(int workers, bool profileSlowedDown) const;
  double computeSlowdownAt(int workers) const;
  const ClusterProfile& besideCompute() const { return *besideCompute_; }

 private:
  std::shared_ptr<const ClusterProfile> besideCompute_;
  std::map<int, double> computeSlowdown_;
};

}  // namespace imerge::distributed
