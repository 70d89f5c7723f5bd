#include "data/synthetic.h"

#include "data/seeding.h"

namespace imerge::data {

SyntheticDataset::SyntheticDataset(int64_t size, Shape imageShape, int64_t classes, uint64_t seed,
                                   TransformPtr transform)
    : size_(size),
      shape_(std::move(imageShape)),
      classes_(classes),
      seed_(seed),
      transform_(std::move(transform)) {
  IMERGE_CHECK(size > 0, "synthetic data: size must be positive, got ", size);
  IMERGE_CHECK(classes > 0, "synthetic data: classes must be positive, got ", classes);
  IMERGE_CHECK(shape_.size() == 3 && shape_[0] > 0 && shape_[1] > 0 && shape_[2] > 0,
               "synthetic data: image shape must be [C, H, W] with positive sizes, got ",
               shapeToString(shape_));
  transformedShape(transform_, shape_);  // validates the transform
}

Example SyntheticDataset::get(int64_t index, Generator& generator) const {
  IMERGE_CHECK(index >= 0 && index < size_, describe(), ": index ", index, " out of range [0, ",
               size_, ")");
  // The content comes from (seed, index) alone; `generator` drives only the transforms, as for
  // data read from files.
  Generator content(mixSeeds(seed_, static_cast<uint64_t>(index)));
  Tensor image = Tensor::empty(shape_);  // [C, H, W]
  content.fillUniform(image, 0.0f, 1.0f);
  const auto label = static_cast<int64_t>(content.nextInt(static_cast<uint64_t>(classes_)));
  return {applyTransform(transform_, image, generator), label};
}

Shape SyntheticDataset::imageShape() const {
  return transformedShape(transform_, shape_);
}

std::string SyntheticDataset::describe() const {
  return "synthetic (" + std::to_string(size_) + " images " + shapeToString(shape_) + ", " +
         std::to_string(classes_) + " classes, seed " + std::to_string(seed_) +
         (transform_ ? ", " + transform_->describe() : std::string()) + ")";
}

}  // namespace imerge::data
