// Ready times, plan validation and plan descriptions (contracts in plan.h).
//
// validatePlan is the single place that decides what a well-formed plan is, so the Reducer, the
// simulator and the tests all refuse the same mistakes with the same words. It checks, in this
// order: every bucket is non-empty and names existing tensors; a bucket of several tensors holds
// consecutive indices, is not a slice and carries the sum of their bytes; a single-tensor bucket
// is either the whole tensor or a slice inside it; and, over the whole plan, each tensor is
// covered exactly once — by one whole bucket, or by slices that tile [0, bytes) with no gap or
// overlap; buckets that communicate before the next forward belong to a FIFO plan that overlaps
// it. The
// order of buckets in the plan is not checked: any order is executable (a FIFO
// plan whose buckets are out of backward order is merely slow).
#include "distributed/planning/plan.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/error.h"
#include "distributed/planning/readable_units.h"

namespace imerge::distributed {
namespace {

// "tensor 3 ('conv1.weight')" so that messages name both the index and what it is.
std::string tensorLabel(const std::vector<TensorInfo>& tensors, size_t index) {
  return detail::concat("tensor ", index, " ('", tensors[index].name, "')");
}

std::string bucketRange(const Bucket& bucket) {
  if (bucket.tensors.empty()) return "[]";
  if (bucket.tensors.size() == 1) return detail::concat("[", bucket.tensors.front(), "]");
  return detail::concat("[", bucket.tensors.front(), "-", bucket.tensors.back(), "]");
}

// A single-tensor bucket is a slice when it does not cover its tensor exactly.
bool isSlice(const Bucket& bucket, const std::vector<TensorInfo>& tensors) {
  return bucket.tensors.size() == 1 &&
         (bucket.sliceOffsetBytes != 0 || bucket.bytes != tensors[bucket.tensors[0]].bytes);
}

}  // namespace

bool Plan::hasForwardPhase() const {
  return std::any_of(buckets.begin(), buckets.end(),
                     [](const Bucket& b) { return b.schedule != Bucket::Schedule::Backward; });
}

std::vector<double> readyTimes(const std::vector<TensorInfo>& tensors) {
  std::vector<double> ready(tensors.size());
  double clock = 0;
  for (size_t k = 0; k < tensors.size(); ++k) {
    IMERGE_CHECK(std::isfinite(tensors[k].backwardSeconds) && tensors[k].backwardSeconds >= 0,
                 tensorLabel(tensors, k), " has backward time ", tensors[k].backwardSeconds,
                 " s; backward times must be finite and not negative");
    clock += tensors[k].backwardSeconds;
    ready[k] = clock;
  }
  return ready;
}

void validatePlan(const Plan& plan, const std::vector<TensorInfo>& tensors) {
  const size_t tensorCount = tensors.size();
  // Per tensor: the buckets that hold it whole, and the slices [offset, offset + bytes) of it.
  std::vector<std::vector<size_t>> wholeBuckets(tensorCount);
  std::vector<std::vector<size_t>> sliceBuckets(tensorCount);

  IMERGE_CHECK(!plan.hasForwardPhase() || (plan.order == LaunchOrder::Fifo &&
                                           plan.overlapWithNextForward && !plan.startAfterBackward),
               "plan: buckets that communicate before the next forward need a FIFO plan that "
               "overlaps it and starts during backward");
  for (size_t b = 0; b < plan.buckets.size(); ++b) {
    const Bucket& bucket = plan.buckets[b];
    IMERGE_CHECK(!bucket.tensors.empty(), "plan: bucket ", b, " holds no tensor");
    for (size_t tensor : bucket.tensors) {
      IMERGE_CHECK(tensor < tensorCount, "plan: bucket ", b, " ", bucketRange(bucket),
                   " names tensor ", tensor, ", but there are only ", tensorCount, " tensors");
    }
    if (bucket.tensors.size() > 1) {
      size_t sumBytes = 0;
      for (size_t i = 0; i < bucket.tensors.size(); ++i) {
        IMERGE_CHECK(
            i == 0 || bucket.tensors[i] == bucket.tensors[i - 1] + 1, "plan: bucket ", b,
            " is not contiguous in backward order: ", tensorLabel(tensors, bucket.tensors[i]),
            " follows ", tensorLabel(tensors, bucket.tensors[i - 1]),
            "; a bucket must hold consecutive tensors so that it is one range of the flat "
            "gradient buffer");
        sumBytes += tensors[bucket.tensors[i]].bytes;
      }
      IMERGE_CHECK(bucket.sliceOffsetBytes == 0, "plan: bucket ", b, " ", bucketRange(bucket),
                   " has slice offset ", bucket.sliceOffsetBytes,
                   " bytes, but only a single-tensor bucket can be a slice");
      IMERGE_CHECK(bucket.bytes == sumBytes, "plan: bucket ", b, " ", bucketRange(bucket), " says ",
                   bucket.bytes, " bytes, but its tensors hold ", sumBytes, " bytes");
      for (size_t tensor : bucket.tensors) wholeBuckets[tensor].push_back(b);
      continue;
    }
    const size_t tensor = bucket.tensors.front();
    if (!isSlice(bucket, tensors)) {
      wholeBuckets[tensor].push_back(b);
      continue;
    }
    const size_t tensorBytes = tensors[tensor].bytes;
    IMERGE_CHECK(bucket.bytes > 0, "plan: bucket ", b, " is an empty slice of ",
                 tensorLabel(tensors, tensor), " (0 bytes at offset ", bucket.sliceOffsetBytes,
                 ")");
    IMERGE_CHECK(bucket.sliceOffsetBytes <= tensorBytes &&
                     bucket.bytes <= tensorBytes - bucket.sliceOffsetBytes,
                 "plan: bucket ", b, " says ", bucket.bytes, " bytes at offset ",
                 bucket.sliceOffsetBytes, " of ", tensorLabel(tensors, tensor),
                 ", which reaches past its ", tensorBytes, " bytes");
    sliceBuckets[tensor].push_back(b);
  }

  for (size_t tensor = 0; tensor < tensorCount; ++tensor) {
    const auto& whole = wholeBuckets[tensor];
    auto& slices = sliceBuckets[tensor];
    IMERGE_CHECK(!whole.empty() || !slices.empty(), "plan: ", tensorLabel(tensors, tensor),
                 " is in no bucket; its gradient would never be reduced");
    IMERGE_CHECK(whole.size() <= 1, "plan: ", tensorLabel(tensors, tensor), " is in buckets ",
                 whole[0], " and ", whole.size() > 1 ? whole[1] : 0,
                 "; each tensor must be reduced exactly once");
    IMERGE_CHECK(whole.empty() || slices.empty(), "plan: ", tensorLabel(tensors, tensor),
                 " is whole in bucket ", whole.empty() ? 0 : whole[0],
                 " and also sliced in bucket ", slices.empty() ? 0 : slices[0],
                 "; each tensor must be reduced exactly once");
    if (slices.empty()) continue;
    std::sort(slices.begin(), slices.end(), [&](size_t a, size_t b) {
      return plan.buckets[a].sliceOffsetBytes < plan.buckets[b].sliceOffsetBytes;
    });
    size_t coveredBytes = 0;  // slices seen so far tile [0, coveredBytes)
    for (size_t b : slices) {
      const Bucket& slice = plan.buckets[b];
      IMERGE_CHECK(slice.sliceOffsetBytes >= coveredBytes, "plan: slices of ",
                   tensorLabel(tensors, tensor), " overlap: bucket ", b, " starts at byte ",
                   slice.sliceOffsetBytes, ", but bytes up to ", coveredBytes,
                   " are already covered");
      IMERGE_CHECK(slice.sliceOffsetBytes == coveredBytes, "plan: slices of ",
                   tensorLabel(tensors, tensor), " do not tile it: bytes [", coveredBytes, ", ",
                   slice.sliceOffsetBytes, ") are in no slice (next is bucket ", b, ")");
      coveredBytes += slice.bytes;
    }
    IMERGE_CHECK(coveredBytes == tensors[tensor].bytes, "plan: slices of ",
                 tensorLabel(tensors, tensor), " do not tile it: they end at byte ", coveredBytes,
                 " of ", tensors[tensor].bytes);
  }
}

std::string describePlan(const Plan& plan, const std::vector<TensorInfo>& tensors) {
  std::ostringstream text;
  text << plan.buckets.size() << (plan.buckets.size() == 1 ? " bucket" : " buckets");
  std::vector<std::string> traits;
  if (plan.order == LaunchOrder::Priority) traits.push_back("priority order");
  if (plan.startAfterBackward) traits.push_back("after backward");
  if (plan.overlapWithNextForward) traits.push_back("overlapping the next forward");
  if (plan.optimalityGapSeconds > 0) {
    traits.push_back("within " + readableSeconds(plan.optimalityGapSeconds) + " of the optimum");
  }
  if (!traits.empty()) {
    text << " (";
    for (size_t i = 0; i < traits.size(); ++i) text << (i ? ", " : "") << traits[i];
    text << ")";
  }
  text << ":";
  for (size_t b = 0; b < plan.buckets.size(); ++b) {
    const Bucket& bucket = plan.buckets[b];
    text << (b ? ", " : " ") << bucketRange(bucket) << " " << readableBytes(bucket.bytes);
    const bool slice = bucket.tensors.size() == 1 && bucket.tensors[0] < tensors.size() &&
                       isSlice(bucket, tensors);
    if (slice) text << " at " << readableBytes(bucket.sliceOffsetBytes);
    if (bucket.schedule == Bucket::Schedule::Split) text << " split";
    if (bucket.schedule == Bucket::Schedule::BeforeForward) text << " before forward";
    if (plan.order == LaunchOrder::Priority) text << " p" << bucket.priority;
  }
  return text.str();
}

}  // namespace imerge::distributed
