// A cluster as the input of a scalability study (imerge-scale --cluster FILE|NAME): the cost of an
// all-reduce at every worker count (the simulator's truth) and the samples each strategy's belief
// is fitted from (belief.h).
//
//   NAME          a built-in cluster (builtInClusters(): 10gbe, 56gb-ib, paper-small+10gbe,
//                 paper-small+56gb-ib), made of the published tables compiled in
//   FILE          recognised by its header:
//                   bytes,...,seconds (imerge-commbench samples; `workers` optional, default 1):
//                     measured, so fitted per worker count (fitPiecewise); the fit is refused,
//                     with the size and the two costs, when it charges a sampled size (or a
//                     size between two) more than 2x its measurement (checkFitFollowsSamples)
//                   network,workers,a_seconds,b_seconds_per_byte (an a + bM table): used as
//                     given; a table of several networks needs FILE:NETWORK
//                   nodes,message_elems,time (a small-message table): only as SMALL below
//   SMALL+LARGE   the IMerge paper's shape: SMALL's flat cost per worker count below 32768
//                 float32 elements (kPaperBreakpointBytes) and LARGE's cost from there on.
//                 SMALL is `paper-small` or a small-message table file; LARGE is `10gbe`,
//                 `56gb-ib` or a FILE as above.
// Tables are the truth as given: nothing is re-fitted. A worker count a table lacks is charged
// from the nearest count it has by the ring rule (cluster_profile.h), and truthAt() says so.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "distributed/planning/cluster_profile.h"
#include "distributed/planning/comm_model.h"

namespace imerge::distributed {

struct BuiltInCluster {
  std::string name;
  std::string description;
};
const std::vector<BuiltInCluster>& builtInClusters();

class ClusterInput {
 public:
  ClusterInput(std::shared_ptr<const ClusterProfile> truth,
               std::map<int, std::vector<CommSample>> measured);

  const ClusterProfile& truth() const { return *truth_; }
  std::shared_ptr<const ClusterProfile> sharedTruth() const { return truth_; }
  bool measured() const { return !measured_.empty(); }
  // "as given" at a count the input has; "ring-scaled from 8 workers" otherwise.
  std::string truthAt(int workers) const;
  // What a planner could have measured at `workers` (belief.h): the measured samples at that
  // count, otherwise the truth sampled over imerge-commbench's sizes (4 B to 256 MiB).
  std::vector<CommSample> beliefSamples(int workers) const;
  // The same cluster with scaled startups and bandwidth (withScaledCosts); its beliefs sample
  // the scaled truth, since no measurement of that network exists.
  ClusterInput withScaledCosts(double startupScale, double bandwidthScale) const;

 private:
  std::shared_ptr<const ClusterProfile> truth_;
  std::map<int, std::vector<CommSample>> measured_;
};

// Reads `spec` (see above). Errors name `flag`, the file and the line, or list the built-in
// names when `spec` is neither a file nor one of them.
ClusterInput loadCluster(const std::string& spec, const std::string& flag = "--cluster");

// The per-count piecewise fits of measured samples (counts below 2 are skipped: one worker
// says nothing about the network), each checked by checkFitFollowsSamples. `source` names the
// samples in errors.
ClusterProfile fitMeasuredCluster(const std::string& source,
                                  const std::vector<CommSample>& samples);

// Refuses (imerge::Error naming `source`, the size, both costs and the fit) a fit at `workers`
// that charges a sampled size more than 2x its measurement (the mean of its repetitions), or a
// size halfway between two adjacent sampled sizes more than 2x the dearer of the two: a knee it
// cannot follow. Charging less is not refused: measurements are noisy upwards (one slow
// repetition lifts a sample), and a fit below such a sample is the better belief.
void checkFitFollowsSamples(const std::string& source, int workers, const CommModel& fit,
                            const std::vector<CommSample>& samples);

}  // namespace imerge::distributed
