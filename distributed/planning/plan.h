// Plans: which gradient tensors travel together, and in what order (docs/design.md sections 3-4).
//
// Tensors are numbered 0..L-1 in the order backward produces their gradients (the reverse of
// the forward order for a chain). A plan is a list of buckets; each bucket is one all-reduce of
// a contiguous byte range of the flat gradient buffer laid out in backward order, so a bucket
// of whole tensors costs no copy. Planners are pure functions of their inputs, so the Reducer
// (real runs) and the simulator (predicted runs) execute the very same plan.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace imerge::distributed {

// One gradient tensor as the planner sees it, in backward order.
struct TensorInfo {
  std::string name;
  size_t bytes = 0;
  // Time from the previous tensor's gradient becoming final (or from the start of backward,
  // for the first) to this one's: r_k = backwardSeconds_0 + ... + backwardSeconds_k.
  double backwardSeconds = 0;
};

// One all-reduce. `tensors` are consecutive indices in backward order. A priority slice holds a
// single tensor and covers bytes [sliceOffsetBytes, sliceOffsetBytes + bytes) of it; a bucket of
// whole tensors has sliceOffsetBytes 0 and bytes equal to the sum of its tensors' bytes.
struct Bucket {
  std::vector<size_t> tensors;
  size_t bytes = 0;
  // Lower is sent first when the plan's order is Priority; FIFO plans use the bucket index.
  int priority = 0;
  size_t sliceOffsetBytes = 0;
  // When the bucket communicates (imerge-overlap chooses; every other strategy's buckets
  // all-reduce during backward). A bucket of another schedule belongs to an
  // overlapWithNextForward FIFO plan.
  enum class Schedule {
    Backward,       // one all-reduce during backward
    Split,          // DeAR: a reduce-scatter during backward, an all-gather before the next forward
    BeforeForward,  // one all-reduce before the next forward, none during backward
  };
  Schedule schedule = Schedule::Backward;
};

enum class LaunchOrder {
  Fifo,      // buckets launch in plan order, each once it is complete and all earlier launched
  Priority,  // among the ready buckets the lowest priority value goes first (P3/ByteScheduler)
};

struct Plan {
  std::vector<Bucket> buckets;
  LaunchOrder order = LaunchOrder::Fifo;
  // `default`: nothing is launched before backward has ended.
  bool startAfterBackward = false;
  // `priority`, `imerge-overlap`: the optimizer step of a layer happens when its last slice has
  // been reduced, and the next forward of that layer waits only for it (instead of one step
  // after all buckets).
  bool overlapWithNextForward = false;
  // How far above the best plan of its search space this one may be, in seconds of predicted
  // iteration: 0 when the planner searched exactly; imerge-overlap's bound when it thinned its
  // search (planners.h).
  double optimalityGapSeconds = 0;
  // Whether some bucket communicates before the next forward (Split or BeforeForward). That
  // work (all-gathers, deferred all-reduces) runs on the channel after every bucket's backward
  // part, in forward order: the bucket of the largest index first.
  bool hasForwardPhase() const;
};

// Ready times r_k (seconds from the start of backward) of tensors in backward order.
std::vector<double> readyTimes(const std::vector<TensorInfo>& tensors);

// Throws imerge::Error naming the first problem: a tensor in no bucket or in two, buckets of
// whole tensors that are not contiguous in backward order, slices that do not tile their
// tensor, a bucket whose bytes disagree with its tensors, or a Split or BeforeForward bucket
// in a plan that is not FIFO with overlapWithNextForward. The order of the buckets is not
// checked: any order executes (a FIFO plan out of backward order is only slow).
void validatePlan(const Plan& plan, const std::vector<TensorInfo>& tensors);

// "12 buckets: [0-3] 1.2 MiB, [4] 64 KiB, ..." for logs.
std::string describePlan(const Plan& plan, const std::vector<TensorInfo>& tensors);

}  // namespace imerge::distributed
