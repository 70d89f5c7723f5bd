// Mini-batches drawn from an in-memory labelled dataset, reshuffled every epoch with a seeded
// generator. The full DataLoader (prefetch threads, per-rank sharding, transforms) replaces
// this in the data-pipeline issue.
#pragma once

#include <vector>

#include "core/random.h"
#include "core/tensor.h"

namespace imerge::data {

struct Batch {
  Tensor images;  // float32 [B, C, H, W]
  Tensor labels;  // int64 [B]
};

class ShuffledBatches {
 public:
  // images [N, C, H, W] float32, labels [N] int64. shuffle=false keeps the stored order
  // (evaluation). The last batch may be smaller.
  ShuffledBatches(Tensor images, Tensor labels, int64_t batchSize, bool shuffle);

  // Starts a new pass: a fresh permutation when shuffling.
  void startEpoch(Generator& generator);
  bool next(Batch& batch);
  int64_t batchesPerEpoch() const;
  int64_t size() const { return images_.dim(0); }

 private:
  Tensor images_;
  Tensor labels_;
  int64_t batchSize_;
  bool shuffle_;
  std::vector<int64_t> order_;
  int64_t position_ = 0;
};

// (x - mean) / std over every element, in place: the usual per-dataset normalisation.
void normalizeInPlace(Tensor& images, float mean, float stddev);

}  // namespace imerge::data
