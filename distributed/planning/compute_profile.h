// Compute profiles: what one worker's iteration costs without any communication, per gradient
// tensor, as the simulator (distributed/planning/simulator.h) and imerge-scale need it.
//
// A profile lists the model's gradient tensors in backward order (TensorInfo: name, bytes,
// backward seconds since the previous tensor's gradient, as the planners see them) and, per
// tensor, the forward seconds of the layer it belongs to, so that the `priority` strategy's
// overlap of the next forward pass with communication can be simulated layer by layer. The
// whole forward pass lasts the sum of the tensors' forward seconds; the optimizer step lasts
// optimizerSeconds; otherSeconds is the rest of a measured iteration (the loss, the training
// loop's metrics, taking the batch from the data loader, the end of backward after the last
// gradient), which the simulator charges between the end of one iteration's work and the next
// forward pass.
//
// Where profiles come from:
//   - measured: `imerge-train --profile FILE` (DataParallel::computeProfile(): the median
//     backward times after the warm-up and the mean forward pass, as the slowest rank ran
//     them: each gradient's latest ready time over ranks, since an all-reduce waits for the
//     last rank to reach it). Per-layer forward times are not measured (the forward
//     pre-hooks belong to the `priority` strategy); the measured forward pass is split over
//     the tensors IN PROPORTION TO THEIR BACKWARD SECONDS (splitForwardByBackward). Why:
//     backward and forward of a layer do the same kind of work (a convolution's backward is
//     two convolutions of the forward's size), so their ratio is nearly the same for every
//     layer, while a split by bytes would give the huge, cheap fully connected layers most of
//     the forward and the convolutions almost none.
//   - derived from FLOPs (profileFromFlops, distributed/profiling/flops_profile.h): each
//     convolution's and linear layer's forward multiply-accumulates, counted on the model's
//     own shapes, at a given speed; backward is twice the forward per layer. Batch norm,
//     activations and pooling are not counted (they are memory-bound and small next to the
//     convolutions at these sizes).
//
// Files (writeComputeProfile / readComputeProfile), chosen by the extension:
//   .json  {"model": "resnet18", "batch_per_worker": 32, "optimizer_seconds": 0.004,
//           "other_seconds": 0.002,
//           "tensors": [{"name": "fc.bias", "bytes": 40, "backward_seconds": 1e-5,
//                        "forward_seconds": 5e-6}, ...]}   (tensors in backward order)
//   else   CSV: a header with the columns name, bytes, backward_seconds, forward_seconds (any
//           order; others ignored), one tensor per line in backward order. Lines starting with
//           '#' are comments, except "# model: NAME", "# batch_per_worker: N",
//           "# optimizer_seconds: S" and "# other_seconds: S" before the header, which carry
//           the scalars (0 when absent).
// Reading refuses, with an imerge::Error naming the file and the line (CSV) or the field
// (JSON): a missing column or field, a non-numeric, negative or non-finite number, a line with
// the wrong number of fields, a duplicate tensor name, a profile without tensors.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "distributed/planning/plan.h"

namespace imerge::distributed {

struct ComputeProfile {
  std::string model;                // informative; empty when unknown
  int64_t batchPerWorker = 0;       // images per worker and iteration the times are for; 0: unknown
  std::vector<TensorInfo> tensors;  // backward order
  std::vector<double> forwardSecondsPerTensor;  // same order; the layer's share of the forward
  double optimizerSeconds = 0;                  // the optimizer step over every parameter
  double otherSeconds = 0;                      // the rest of an iteration (see above)

  double forwardSeconds() const;   // the whole forward pass
  double backwardSeconds() const;  // the whole backward pass: r of the last tensor
  // One worker's iteration: forward + backward + optimizer + the rest, no communication.
  double computeSeconds() const {
    return forwardSeconds() + backwardSeconds() + optimizerSeconds + otherSeconds;
  }
};

// The measured forward pass split over `tensors` in proportion to their backward seconds (see
// the file comment); evenly when every backward time is zero.
std::vector<double> splitForwardByBackward(const std::vector<TensorInfo>& tensors,
                                           double forwardSeconds);

// `profile` with every time multiplied by `factor` (finite, above 0): the same work on a device
// that is 1/factor as fast, e.g. a FLOPs-derived profile brought to a published single-worker
// throughput.
ComputeProfile scaledComputeProfile(ComputeProfile profile, double factor);

// Throws imerge::Error naming the first problem: no tensors, a forward list of another length,
// a negative or non-finite time, an empty or duplicate name.
void validateComputeProfile(const ComputeProfile& profile, const std::string& source);

void writeComputeProfile(const std::string& path, const ComputeProfile& profile);
ComputeProfile readComputeProfile(const std::string& path);

}  // namespace imerge::distributed
