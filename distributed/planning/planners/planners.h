// The planner of each strategy of docs/design.md section 4 (private to distributed/: everyone else
// gets them through makePlanner in distributed/planning/planner.h). One class per file of this
// folder.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "distributed/planning/planner.h"

namespace imerge::distributed {

// `default`: one bucket per tensor, in backward order, nothing launched before backward ends.
class DefaultPlanner : public Planner {
 public:
  std::string name() const override { return "default"; }
  Plan plan(const std::vector<TensorInfo>& tensors, const CommModel& model,
            int workers) const override;
  bool usesTimings() const override { return false; }
};

// `wfbp`: one bucket per tensor, each launched as soon as it is ready, FIFO.
class WfbpPlanner : public Planner {
 public:
  std::string name() const override { return "wfbp"; }
  Plan plan(const std::vector<TensorInfo>& tensors, const CommModel& model,
            int workers) const override;
  bool usesTimings() const override { return false; }
};

// `fusion`: Horovod-style static threshold. Walking backward order, a tensor joins the open
// bucket when the bucket's bytes plus its own stay within fusionBytes; otherwise the open
// bucket is closed and the tensor opens the next one. So no bucket exceeds fusionBytes except
// one holding a single larger tensor (which is closed as soon as the next tensor arrives).
// A bucket that reaches exactly fusionBytes stays open only for zero-byte tensors.
class FusionPlanner : public Planner {
 public:
  explicit FusionPlanner(size_t fusionBytes);
  std::string name() const override { return "fusion"; }
  Plan plan(const std::vector<TensorInfo>& tensors, const CommModel& model,
            int workers) const override;
  bool usesTimings() const override { return false; }

 private:
  size_t fusionBytes_;
};

// `ddp` (PyTorch DDP's buckets): walking backward order, each tensor joins the open bucket,
// which closes as soon as its bytes reach its cap: firstBucketBytes for the first bucket (1 MiB
// in PyTorch, so the first all-reduce starts early), bucketBytes for the others (25 MiB,
// bucket_cap_mb). Buckets launch FIFO once their last tensor is final. The plan depends on sizes
// alone.
class DdpPlanner : public Planner {
 public:
  DdpPlanner(size_t firstBucketBytes, size_t bucketBytes);
  std::string name() const override { return "ddp"; }
  Plan plan(const std::vector<TensorInfo>& tensors, const CommModel& model,
            int workers) const override;
  bool usesTimings() const override { return false; }

 private:
  size_t firstBucketBytes_;
  size_t bucketBytes_;
};

// `priority` (P3, ByteScheduler): every tensor cut into slices of at most sliceElements float32
// elements (4 bytes each; the last slice takes the rest), one bucket per slice, in backward
// order and then byte order. A slice's priority is its tensor's forward position L-1-k, so the
// first layer's slices go first among the ready ones; the plan is LaunchOrder::Priority with
// overlapWithNextForward. A zero-byte tensor gets one empty whole bucket.
class PriorityPlanner : public Planner {
 public:
  explicit PriorityPlanner(size_t sliceElements);
  std::string name() const override { return "priority"; }
  Plan plan(const std::vector<TensorInfo>& tensors, const CommModel& model,
            int workers) const override;
  bool usesTimings() const override { return false; }

 private:
  size_t sliceBytes_;
};

// `mgwfbp` (Shi et al.): the greedy merge rule of docs/design.md, walking k = 0..L-2 (0-based),
// with s_k, e_k the start and end of k's current group on a FIFO channel under `model`: tensor k+1
// joins k's group when r_{k+1} < e_k and (s_k > r_{k+1} or r_{k+1} - s_k < a), all strict. The
// startup `a` is the model's alphaSeconds() when the model is a LinearCommModel, otherwise
// model.seconds(1 byte) (the cost of the smallest message, which is what a startup is).
// Since a >= 0, the first condition implies the second (r_{k+1} - s_k < 0 <= a); both are
// kept, as docs/design.md and the paper state them.
class MgwfbpPlanner : public Planner {
 public:
  std::string name() const override { return "mgwfbp"; }
  Plan plan(const std::vector<TensorInfo>& tensors, const CommModel& model,
            int workers) const override;
  bool usesTimings() const override { return true; }
};

// `imerge`: the contiguous grouping that minimizes when the last all-reduce ends on a FIFO
// channel under `model`, by the O(L^2) dynamic programme f(j) = min_i max(f(i-1), r_j) +
// T(bytes(i..j)). Ties (within a relative 1e-12) go to fewer buckets, and then to the larger
// last bucket of the prefix (the smallest i), so the plan is deterministic.
class ImergePlanner : public Planner {
 public:
  std::string name() const override { return "imerge"; }
  Plan plan(const std::vector<TensorInfo>& tensors, const CommModel& model,
            int workers) const override;
  bool usesTimings() const override { return true; }
};

// `imerge-overlap`: imerge's optimal contiguous grouping, where each group also chooses when it
// communicates (Bucket::Schedule, plan.h): one all-reduce during backward (as imerge), DeAR's
// split (a reduce-scatter during backward, an all-gather before the next forward of its
// layers), or one all-reduce before the next forward. Tensors larger than --slice-elems are
// cut into slices as `priority` cuts them (but into 256 at most, which keeps the programme
// small), so part of a large tensor can go during backward and the rest before the next
// forward; a group is whole tensors or a range of slices of one tensor. The
// plan overlaps the next forward. It minimizes the simulator's iteration (simulator.h, without
// contention) over every such grouping and schedule (the tests compare it with exhaustive
// search). With time 0 at the start of backward, B its end, P(k) the update-plus-forward time
// of tensors 0..k-1, C the end of the channel's backward part and j_g one past the last tensor
// of group g, the next backward starts at
//   T = max(B + other + P(L), C + max(P(L), Q)),
//   Q = max over forward-phase groups g of (P(j_g) + the forward-phase work of g and every
//       later group),
// because the forward runs tensors L-1..0, each group is awaited before its last tensor's
// forward, the forward-phase work follows C in forward order, and a group that all-reduces
// during backward is either the last (then C + P(L) is its term) or followed by a forward-phase
// group whose term is larger. Appending a group changes f (the channel end so far) and Q
// monotonically, so the programme keeps, per prefix, the Pareto set of (f, Q), dropping states
// that cannot beat imerge's grouping. A set larger than 256 states is thinned by f
// (imerge_overlap_planner.cpp), and the plan's optimalityGapSeconds then bounds how far above
// the optimum it may be; imerge's grouping stays the fallback, so under one belief it never
// plans slower than imerge. Ties within a relative 1e-12 go to fewer buckets, then to fewer
// that communicate before the forward.
//
// The narrow plan(tensors, model, workers) knows no forward times: it plans with zero forward,
// optimizer and other time and the ring rule's halves of `model` (collective_costs.h).
class ImergeOverlapPlanner : public Planner {
 public:
  explicit ImergeOverlapPlanner(size_t sliceElements);
  std::string name() const override { return "imerge-overlap"; }
  Plan plan(const std::vector<TensorInfo>& tensors, const CommModel& model,
            int workers) const override;
  Plan plan(const ComputeProfile& profile, const CollectiveCosts& costs,
            int workers) const override;
  bool usesTimings() const override { return true; }

 private:
  size_t sliceBytes_;
};

// Helpers the planners share.
namespace planning {

// Throws unless workers >= 1 (every planner takes the worker count, even those that ignore it).
void checkWorkers(const std::string& planner, int workers);

// --slice-elems (float32 elements) in bytes; refused, naming `planner`, below 1 element or where
// the bytes would overflow.
size_t sliceBytesOf(const std::string& planner, size_t sliceElements);

// A tensor of `bytes` cut into pieces of at most sliceBytes, in byte order: at least one, so a
// zero-byte tensor is still reduced (as one empty piece).
struct SliceRange {
  size_t offsetBytes = 0;
  size_t bytes = 0;
};
std::vector<SliceRange> sliceRanges(size_t bytes, size_t sliceBytes);

// Bucket of the whole tensors [first, last] (inclusive, backward order), priority = bucketIndex.
Bucket wholeTensorBucket(const std::vector<TensorInfo>& tensors, size_t first, size_t last,
                         int bucketIndex);

// One bucket per tensor, FIFO.
Plan bucketPerTensor(const std::vector<TensorInfo>& tensors);

// A FIFO plan from group boundaries: groupStarts[g] is the first tensor of group g, increasing,
// starting at 0; each group runs to the next group's start.
Plan planFromGroupStarts(const std::vector<TensorInfo>& tensors,
                         const std::vector<size_t>& groupStarts);

}  // namespace planning
}  // namespace imerge::distributed
