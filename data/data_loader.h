// DataLoader: batches from a Dataset, shuffled per epoch with a seeded generator, sharded by
// rank for data-parallel runs, and decoded by background worker threads so that loading
// overlaps training (PyTorch's DataLoader with num_workers and DistributedSampler).
//
// Order is deterministic for a given (seed, epoch, rank, worldSize), whatever the number of
// workers: batch b of an epoch always holds the same examples with the same random transforms.
//
// How: the epoch's order is a permutation drawn from a generator seeded by (seed, epoch), the
// same on every rank. Like DistributedSampler, it is padded by wrapping around to a multiple of
// worldSize and rank r takes positions r, r + worldSize, ...; so every rank gets
// ceil(size / worldSize) examples and the ranks together cover the dataset. Example i's random
// transforms draw from a generator seeded by (seed, epoch, i), and workers claim whole batches
// in order and hand them back in order, so threads change only when a batch is ready.
//
// Threads: `workers` threads decode batches ahead of the consumer, at most `prefetchBatches`
// batches beyond the one next() returns. An exception while reading example i is rethrown by
// the next() that would have returned its batch, as an imerge::Error naming i and the dataset.
// The destructor stops and joins the workers; a batch being decoded finishes first.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "data/dataset.h"

namespace imerge::data {

struct Batch {
  Tensor images;  // float32 [B, C, H, W]
  Tensor labels;  // int64 [B]
};

struct DataLoaderOptions {
  int64_t batchSize = 64;
  bool shuffle = true;
  bool dropLast = false;
  int workers = 2;          // background decoding threads; 0 decodes on the caller's thread
  int prefetchBatches = 4;  // batches decoded ahead of the consumer
  uint64_t seed = 0;
  int rank = 0;       // this process's shard ...
  int worldSize = 1;  // ... of this many (every rank sees the same number of batches)
  // Where the end-of-epoch count of skipped (undecodable) examples goes; standard error when
  // empty.
  std::function<void(const std::string&)> warn = {};
};

class DataLoader {
 public:
  DataLoader(std::shared_ptr<const Dataset> dataset, const DataLoaderOptions& options);
  ~DataLoader();
  DataLoader(const DataLoader&) = delete;
  DataLoader& operator=(const DataLoader&) = delete;

  // Starts an epoch: a fresh permutation (when shuffling) from (seed, epoch). Batches of the
  // previous epoch still in flight are discarded. next() without it starts epoch 0. With
  // `firstBatch`, the epoch continues there (a run resumed in the middle of an epoch): next()
  // returns the batches an uninterrupted epoch returns from that one on, and the ones before
  // it are never read.
  void startEpoch(int64_t epoch, int64_t firstBatch = 0);
  // The next batch of the epoch (images float32 [B, C, H, W], labels int64 [B]); false when the
  // epoch is done. The last batch is smaller unless dropLast.
  bool next(Batch& batch);
  int64_t batchesPerEpoch() const;
  // Examples this rank reads per epoch: ceil(size / worldSize), before dropLast.
  int64_t examplesPerRank() const;
  // This epoch's dataset indices for this rank, in the order next() returns them.
  std::vector<int64_t> epochIndices() const;
  // Seconds the consumer spent waiting in next() this epoch: 0 when prefetch keeps up; with
  // workers = 0 it is all the decoding time.
  double waitSeconds() const;

  const Dataset& dataset() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace imerge::data
