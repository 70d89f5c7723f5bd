// Image transforms applied per example by a Dataset: resize, random crop with padding, centre
// crop, horizontal flip, per-channel normalisation, and a composition of them.
//
// Every transform takes and returns one float32 image [C, H, W] and draws any randomness from
// the generator it is given (the DataLoader seeds one per example from (seed, epoch, index), so
// an example's augmentation does not depend on which worker thread decodes it). Semantics follow
// torchvision's transforms of the same names so that pipelines carry over; the differences are
// stated on each factory.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/random.h"
#include "core/tensor.h"

namespace imerge::data {

class Transform {
 public:
  virtual ~Transform() = default;
  // image: float32 [C, H, W]; returns a new image, never a view of the input.
  virtual Tensor apply(const Tensor& image, Generator& generator) const = 0;
  // The output shape for an input shape [C, H, W]; a size of -1 means "varies per image" (an
  // image folder before a resize or crop) and propagates where the output depends on it.
  virtual Shape outputShape(const Shape& input) const = 0;
  virtual std::string describe() const = 0;
};

using TransformPtr = std::shared_ptr<const Transform>;

// Bilinear resize to exactly height x width, as torch.nn.functional.interpolate(mode="bilinear",
// align_corners=False) without antialiasing (torchvision's Resize antialiases when shrinking
// tensors since 0.17; this does not).
TransformPtr resize(int64_t height, int64_t width);
// Bilinear resize so the shorter side becomes `size`, keeping the aspect ratio (torchvision's
// Resize(int)): the longer side is floor(size * long / short).
TransformPtr resizeShorterSide(int64_t size);
// Pads every side with `padding` zeros, then crops height x width at a uniformly random offset
// (torchvision's RandomCrop(size, padding) with fill 0).
TransformPtr randomCrop(int64_t height, int64_t width, int64_t padding = 0);
// The central height x width window; offsets round half to even as torchvision's CenterCrop
// (Python's round). A window larger than the image is filled with zeros outside it.
TransformPtr centerCrop(int64_t height, int64_t width);
// Mirrors left-right with probability `probability`.
TransformPtr randomHorizontalFlip(double probability = 0.5);
// (x - mean[c]) / stddev[c] per channel; one value each applies to every channel.
TransformPtr normalize(std::vector<float> mean, std::vector<float> stddev);
// Applies `transforms` in order; null entries are not allowed.
TransformPtr compose(std::vector<TransformPtr> transforms);

// The transform's output shape, or `input` when `transform` is null.
Shape transformedShape(const TransformPtr& transform, const Shape& input);
// transform->apply(image), or `image` itself when `transform` is null.
Tensor applyTransform(const TransformPtr& transform, const Tensor& image, Generator& generator);

}  // namespace imerge::data
