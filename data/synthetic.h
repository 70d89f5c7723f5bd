// Synthetic labelled images for benchmarks and tests: no files, any shape, reproducible.
//
// Example i is a pure function of (seed, i): pixels uniform in [0, 1), label uniform in
// [0, classes). Nothing is stored, so a dataset of a million ImageNet-sized images costs no
// memory; each get() generates its image (about 0.5 ms for 3x224x224 here).
#pragma once

#include <cstdint>

#include "data/dataset.h"
#include "data/transforms.h"

namespace imerge::data {

class SyntheticDataset final : public Dataset {
 public:
  // imageShape: [C, H, W] before transforms.
  SyntheticDataset(int64_t size, Shape imageShape, int64_t classes, uint64_t seed = 0,
                   TransformPtr transform = nullptr);

  int64_t size() const override { return size_; }
  Example get(int64_t index, Generator& generator) const override;
  Shape imageShape() const override;
  int64_t classes() const override { return classes_; }
  std::string describe() const override;

 private:
  int64_t size_;
  Shape shape_;
  int64_t classes_;
  uint64_t seed_;
  TransformPtr transform_;
};

}  // namespace imerge::data
