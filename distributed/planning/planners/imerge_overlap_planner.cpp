// `imerge-overlap`: the grouping and split labelling that minimise the iteration, by a dynamic
// programme over Pareto sets of (channel end, split term); the objective and why two numbers
// per prefix suffice are in planners.h.
//
// Why Pareto sets instead of imerge's single best prefix: a prefix that ends its channel work
// later may leave less all-gather work behind its split groups, so neither number alone ranks
// prefixes. Both only grow as groups are appended, so a prefix that is no better in both is never
// needed. States whose channel end alone rules out beating the best all-whole plan are dropped.
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"
#include "distributed/planning/channel_schedule.h"
#include "distributed/planning/planners/planners.h"

namespace imerge::distributed {
namespace {

constexpr double kNone = -std::numeric_limits<double>::infinity();

// A way to cover the first j tensors; `previous` is its index in the front of prefix
// `previousLength` (the prefix before its last group).
struct State {
  double channelEnd = 0;     // f: when the channel's backward part of these groups ends
  double splitTerm = kNone;  // Q: max over forward-phase groups g of P(j_g) + that phase to g
  size_t buckets = 0;
  size_t late = 0;  // groups that communicate before the next forward
  size_t previousLength = 0;
  size_t previous = 0;
  Bucket::Schedule schedule = Bucket::Schedule::Backward;  // the last group's
};

bool sortsBefore(const State& a, const State& b) {
  if (a.channelEnd != b.channelEnd) return a.channelEnd < b.channelEnd;
  if (a.splitTerm != b.splitTerm) return a.splitTerm < b.splitTerm;
  if (a.buckets != b.buckets) return a.buckets < b.buckets;
  return a.late < b.late;
}

// The states that no other matches or beats in both f and Q: by f, those that lower Q.
std::vector<State> paretoFront(std::vector<State> candidates) {
  std::sort(candidates.begin(), candidates.end(), sortsBefore);
  std::vector<State> front;
  for (const State& state : candidates) {
    if (front.empty() || state.splitTerm < front.back().splitTerm) front.push_back(state);
  }
  return front;
}

// A front of more than kMaxFront states (a network so slow that the channel is backlogged
// through all of backward, where prefixes differ in f by microseconds) is thinned to one state
// per f-cell of width delta = (f range) / kMaxFront: the cell's last, whose f is at most delta
// later and whose Q is no larger than any other's in it. A plan continued from the kept state
// instead of a dropped one ends at most delta later (f' = max(f, r) + c moves by at most as much
// as f, and Q' does not depend on f), so the returned plan is at most the sum of the deltas
// above the optimum. Returns delta.
constexpr size_t kMaxFront = 256;

double thin(std::vector<State>& front) {
  const double first = front.front().channelEnd;
  const double delta = (front.back().channelEnd - first) / static_cast<double>(kMaxFront);
  std::vector<State> kept;
  for (size_t s = 0; s < front.size(); ++s) {
    const bool lastOfCell =
        s + 1 == front.size() || std::floor((front[s + 1].channelEnd - first) / delta) !=
                                     std::floor((front[s].channelEnd - first) / delta);
    if (lastOfCell) kept.push_back(front[s]);
  }
  front = std::move(kept);
  return delta;
}

}  // namespace

Plan ImergeOverlapPlanner::plan(const std::vector<TensorInfo>& tensors, const CommModel& model,
                                int workers) const {
  ComputeProfile profile;
  profile.tensors = tensors;
  profile.forwardSecondsPerTensor.assign(tensors.size(), 0.0);
  // `model` outlives this call; the costs only borrow it.
  const std::shared_ptr<const CommModel> borrowed(&model, [](const CommModel*) {});
  return plan(profile, ringSplitCosts(borrowed), workers);
}

namespace {

// A piece of the flat gradient buffer the programme groups: a whole tensor, or one slice of at
// most sliceBytes of a larger one (in byte order).
struct Item {
  size_t tensor = 0;
  size_t offset = 0;
  size_t bytes = 0;
  bool first = true;  // the tensor's first slice
  bool last = true;   // the tensor's last slice
};

// A tensor is cut into at most this many slices: the programme tries every range of one
// tensor's slices, so s slices cost s^2 / 2 groups (a 2 MiB layer at 100 elements per slice
// would be 5243 slices and 14 million groups). At 64, VGG-16's fc6 was sliced more coarsely than
// `priority` slices it and lost up to 0.7% to it in the imerge-paper sweep; at 256 no cell did.
constexpr size_t kMaxSlicesPerTensor = 256;

std::vector<Item> itemsOf(const std::vector<TensorInfo>& tensors, size_t sliceBytes) {
  std::vector<Item> items;
  for (size_t k = 0; k < tensors.size(); ++k) {
    const size_t floats = (tensors[k].bytes + 3) / 4;
    const size_t coarsest = (floats + kMaxSlicesPerTensor - 1) / kMaxSlicesPerTensor * 4;
    const size_t bytes = std::max(sliceBytes, coarsest);
    for (const planning::SliceRange& range : planning::sliceRanges(tensors[k].bytes, bytes)) {
      items.push_back({k, range.offsetBytes, range.bytes, range.offsetBytes == 0,
                       range.offsetBytes + range.bytes == tensors[k].bytes});
    }
  }
  return items;
}
}  // namespace

ImergeOverlapPlanner::ImergeOverlapPlanner(size_t sliceElements)
    : sliceBytes_(planning::sliceBytesOf("imerge-overlap", sliceElements)) {}

Plan ImergeOverlapPlanner::plan(const ComputeProfile& profile, const CollectiveCosts& costs,
                                int workers) const {
  planning::checkWorkers(name(), workers);
  IMERGE_CHECK(costs.allReduce && costs.reduceScatter && costs.allGather,
               "imerge-overlap planner: the all-reduce, reduce-scatter and all-gather costs are "
               "all needed");
  const std::vector<TensorInfo>& tensors = profile.tensors;
  if (tensors.empty()) return {};
  validateComputeProfile(profile, "imerge-overlap planner");
  const std::vector<double> ready = readyTimes(tensors);

  double totalBytes = 0;
  for (const TensorInfo& tensor : tensors) totalBytes += static_cast<double>(tensor.bytes);
  // forwardWork[k]: the update-plus-forward time of tensors 0..k-1, P(k).
  std::vector<double> forwardWork(tensors.size() + 1, 0);
  for (size_t k = 0; k < tensors.size(); ++k) {
    const double update = totalBytes > 0 ? profile.optimizerSeconds *
                                               static_cast<double>(tensors[k].bytes) / totalBytes
                                         : 0.0;
    forwardWork[k + 1] = forwardWork[k] + update + profile.forwardSecondsPerTensor[k];
  }
  const double allForward = forwardWork.back();
  const double forwardRelease = ready.back() + profile.otherSeconds;  // B + other
  auto iteration = [&](const State& s) {
    return std::max(forwardRelease + allForward, s.channelEnd + std::max(s.splitTerm, allForward));
  };

  // The bound: imerge's grouping of whole tensors, all-reduced during backward and awaited layer
  // by layer, makes T = max(B + other, C) + P(L) with C its channel end.
  const Plan imergePlan = ImergePlanner().plan(tensors, *costs.allReduce, workers);
  const double bound =
      (std::max(forwardRelease, fifoFinishTime(imergePlan, tensors, *costs.allReduce, workers)) +
       allForward) *
      (1 + 1e-12);

  // The programme runs over items; a group is whole tensors or a range of one tensor's slices
  // (a bucket is one range of the flat buffer, plan.h). P of a group that ends inside tensor k
  // is P(k + 1): the tensor waits for its last slice.
  const std::vector<Item> items = itemsOf(tensors, sliceBytes_);
  const size_t count = items.size();
  std::vector<size_t> prefixBytes(count + 1, 0);
  for (size_t i = 0; i < count; ++i) prefixBytes[i + 1] = prefixBytes[i] + items[i].bytes;
  auto groupForward = [&](size_t j) { return forwardWork[items[j - 1].tensor + 1]; };
  // firstItem[k]: the 1-based index of tensor k's first item.
  std::vector<size_t> firstItem(tensors.size(), 0);
  for (size_t i = count; i >= 1; --i) firstItem[items[i - 1].tensor] = i;

  // Every plan's T is at least max(B + other + P(L), f + max(Q, P(L))) at any of its prefixes,
  // since f and Q only grow: states above the bound (plus what thinning may have cost) go.
  double gap = 0;
  auto withinBound = [&](const State& s) { return iteration(s) <= bound + gap; };
  std::vector<std::vector<State>> fronts(count + 1);
  fronts[0] = {State{}};
  for (size_t j = 1; j <= count; ++j) {
    std::vector<State> candidates;
    const double groupReady = ready[items[j - 1].tensor];
    // The groups ending at item j (items i-1..j-1): a range of its tensor's slices, or, when it
    // ends its tensor, whole tensors from any earlier tensor's start.
    const size_t tensor = items[j - 1].tensor;
    std::vector<size_t> starts;
    if (items[j - 1].last) {
      for (size_t k = 0; k < tensor; ++k) starts.push_back(firstItem[k]);
    }
    for (size_t i = firstItem[tensor]; i <= j; ++i) starts.push_back(i);
    for (size_t i : starts) {
      const size_t bytes = prefixBytes[j] - prefixBytes[i - 1];
      const double wholeSeconds = costs.allReduce->seconds(bytes, workers);
      const double scatterSeconds = costs.reduceScatter->seconds(bytes, workers);
      const double gatherSeconds = costs.allGather->seconds(bytes, workers);
      for (size_t p = 0; p < fronts[i - 1].size(); ++p) {
        const State& before = fronts[i - 1][p];
        const double start = std::max(before.channelEnd, groupReady);
        State whole = before;
        whole.channelEnd = start + wholeSeconds;
        whole.buckets = before.buckets + 1;
        whole.previousLength = i - 1;
        whole.previous = p;
        whole.schedule = Bucket::Schedule::Backward;
        State split = whole;
        split.channelEnd = start + scatterSeconds;
        split.splitTerm = gatherSeconds + std::max(before.splitTerm, groupForward(j));
        split.late = before.late + 1;
        split.schedule = Bucket::Schedule::Split;
        State deferred = split;
        deferred.channelEnd = start;
        deferred.splitTerm = wholeSeconds + std::max(before.splitTerm, groupForward(j));
        deferred.schedule = Bucket::Schedule::BeforeForward;
        for (State* state : {&whole, &split, &deferred}) {
          // Values the rest cannot tell apart are made equal, so that such states merge: the
          // next group is ready at item j's ready time or later and takes max(Q, its P) with
          // a P of at least item j's.
          if (j < count) {
            state->channelEnd = std::max(state->channelEnd, ready[items[j].tensor]);
            state->splitTerm = std::max(state->splitTerm, groupForward(j + 1));
          }
          if (withinBound(*state)) candidates.push_back(*state);
        }
      }
    }
    // May be empty: a boundary after item j can cost more than the bound when the item ends
    // inside a sliced tensor (the groups around it then pay one more startup than imerge's).
    fronts[j] = paretoFront(std::move(candidates));
    if (fronts[j].size() > kMaxFront) gap += thin(fronts[j]);
  }

  Plan plan;
  plan.overlapWithNextForward = true;
  plan.optimalityGapSeconds = gap;
  // Thinning may have dropped imerge's grouping; it stays the fallback.
  const std::vector<State>& last = fronts[count];
  if (last.empty()) {
    plan.buckets = imergePlan.buckets;
    return plan;
  }
  // The best complete state: least T, then fewer buckets, then fewer before the next forward.
  size_t best = 0;
  for (size_t s = 1; s < last.size(); ++s) {
    const double candidate = iteration(last[s]), incumbent = iteration(last[best]);
    const double tolerance = 1e-12 * std::fabs(incumbent);
    const bool fewer =
        std::pair(last[s].buckets, last[s].late) < std::pair(last[best].buckets, last[best].late);
    if (candidate < incumbent - tolerance || (candidate <= incumbent + tolerance && fewer)) {
      best = s;
    }
  }
  if (iteration(last[best]) > bound) {
    plan.buckets = imergePlan.buckets;
    return plan;
  }

  // Walk the chosen state's groups back to the front.
  for (size_t length = count, s = best; length > 0;) {
    const State& state = fronts[length][s];
    const Item& first = items[state.previousLength];
    const Item& lastItem = items[length - 1];
    Bucket bucket;
    if (first.first && lastItem.last) {
      bucket = planning::wholeTensorBucket(tensors, first.tensor, lastItem.tensor, 0);
    } else {
      bucket.tensors = {first.tensor};
      bucket.sliceOffsetBytes = first.offset;
      bucket.bytes = prefixBytes[length] - prefixBytes[state.previousLength];
    }
    bucket.schedule = state.schedule;
    plan.buckets.push_back(std::move(bucket));
    length = state.previousLength;
    s = state.previous;
  }
  std::reverse(plan.buckets.begin(), plan.buckets.end());
  for (size_t b = 0; b < plan.buckets.size(); ++b) plan.buckets[b].priority = static_cast<int>(b);
  return plan;
}

}  // namespace imerge::distributed
