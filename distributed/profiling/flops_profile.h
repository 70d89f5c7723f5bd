// A compute profile (distributed/planning/compute_profile.h) derived from a model's own shapes
// and a device speed instead of measured: what imerge-scale simulates when no measured profile
// is given, and what tests compare measured profiles against.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/shape.h"
#include "distributed/planning/compute_profile.h"
#include "layers/module.h"

namespace imerge::distributed {

// The profile of `model` from its multiply-accumulates at `gigaflops` GFLOP/s (one MAC = two
// FLOPs) for `batchPerWorker` images of `imageShape` ([C, H, W]). The shapes are the model's
// own: a forward pass on one image records the order in which the layers run (backward order is
// its reverse), and each convolution's input size is read from that pass. Each layer's backward
// time is given to the first of its tensors that backward produces, the others get 0 (they
// become final together). The optimizer step is not counted (0).
ComputeProfile profileFromFlops(layers::Module& model, const Shape& imageShape,
                                int64_t batchPerWorker, double gigaflops);

// Forward multiply-accumulates of one image, per parameter-owning layer in forward order, and
// the layers' names ("layer1.0.conv1"): what profileFromFlops charges, for tests and reports.
struct LayerMacs {
  std::string name;
  double macs = 0;
};
std::vector<LayerMacs> countForwardMacs(layers::Module& model, const Shape& imageShape);

}  // namespace imerge::distributed
