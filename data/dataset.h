// A labelled image dataset: random access to decoded, transformed examples.
//
// Implementations: IDX (MNIST, Fashion-MNIST), CIFAR-10 binary batches, image folders in
// ImageNet layout, synthetic data. A dataset must be safe to read from several threads at once
// (the DataLoader's prefetch workers call get() concurrently).
#pragma once

#include <cstdint>
#include <string>

#include "core/random.h"
#include "core/tensor.h"

namespace imerge::data {

struct Example {
  Tensor image;  // float32 [C, H, W]
  int64_t label = 0;
};

class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual int64_t size() const = 0;
  // The example at `index` in [0, size()), after the dataset's transforms; random transforms
  // draw from `generator` (the DataLoader seeds one per example from its seed, the epoch and
  // `index`). Throws imerge::Error naming the file or index when it cannot be read.
  virtual Example get(int64_t index, Generator& generator) const = 0;
  // [C, H, W] after transforms; -1 for a size that varies per image (an image folder without a
  // resize or crop), which the DataLoader cannot batch.
  virtual Shape imageShape() const = 0;
  virtual int64_t classes() const = 0;
  virtual std::string describe() const = 0;
  // Examples whose files could not be decoded and were skipped (image folders outside strict
  // mode), so far; in-memory datasets never skip. The DataLoader reports it at each epoch's end.
  virtual int64_t skippedExamples() const { return 0; }
};

}  // namespace imerge::data
