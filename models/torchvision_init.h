// torchvision's weight initialisation, applied to a built module tree (torchvision does the
// same with `for m in self.modules()` at the end of each model's constructor).
//
// Layers draw PyTorch's default initialisation when they are constructed; these functions
// overwrite it where torchvision chooses otherwise, so a model starts from the same
// distribution as its torchvision counterpart (not the same values: the generators differ).
#pragma once

#include <functional>

#include "core/random.h"
#include "layers/module.h"

namespace imerge::models::internal {

// Visits `root` and every module below it, depth first, parents before children.
void forEachModule(layers::Module& root, const std::function<void(layers::Module&)>& visit);

// Every Conv2d: weight ~ kaiming_normal(mode=fan_out, nonlinearity=relu), bias = 0.
// BatchNorm2d already starts at weight 1, bias 0, which is what torchvision sets.
void initConvsKaimingFanOut(layers::Module& root, Generator& generator);

// Every Linear: weight ~ normal(0, stddev), bias = 0 (torchvision's VGG uses 0.01).
void initLinearsNormal(layers::Module& root, float stddev, Generator& generator);

// normal(mean, stddev) into a float32 tensor, about fifteen times faster than
// Generator::fillNormal (double-precision Box-Muller, ~40 ns a value): VGG's ImageNet
// classifier alone holds 120M weights, 5 s per model the slow way. Draws one seed from
// `generator` and runs a local xoshiro256** stream with Marsaglia's polar method, so the values
// still repeat with the generator's seed.
void fillNormalFast(Tensor& tensor, float mean, float stddev, Generator& generator);

}  // namespace imerge::models::internal
