// The DataLoader: every example once per epoch, reproducible order from the seed, a new order
// each epoch, identical batches whatever the number of workers (random transforms included),
// DistributedSampler-style sharding, dropLast, worker exceptions surfacing in next(), restarts
// mid-epoch and shutdown with batches in flight.
#include "data/data_loader.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <numeric>
#include <set>
#include <thread>
#include <vector>

#include "support/error_text.h"

namespace imerge::data {
namespace {

using testing::errorMessage;
using testing::expectContains;

// Example i: image [2, 1, 1] holding i and one draw from the example's generator (standing in
// for a random transform), label i. Optionally slow, or failing at one index.
class IndexDataset final : public Dataset {
 public:
  explicit IndexDataset(int64_t size, int64_t failAt = -1, int sleepMicroseconds = 0)
      : size_(size), failAt_(failAt), sleepMicroseconds_(sleepMicroseconds) {}
  int64_t size() const override { return size_; }
  Example get(int64_t index, Generator& generator) const override {
    if (sleepMicroseconds_ > 0) {
      std::this_thread::sleep_for(std::chrono::microseconds(sleepMicroseconds_));
    }
    IMERGE_CHECK(index != failAt_, "cannot read record ", index, " (injected failure)");
    Tensor image = Tensor::fromVector(
        std::vector<float>{static_cast<float>(index), generator.uniform(0.0f, 1.0f)}, {2, 1, 1});
    return {image, index};
  }
  Shape imageShape() const override { return {2, 1, 1}; }
  int64_t classes() const override { return size_; }
  std::string describe() const override { return "index dataset"; }

 private:
  int64_t size_;
  int64_t failAt_;
  int sleepMicroseconds_;
};

struct Epoch {
  std::vector<int64_t> labels;             // in the order seen
  std::vector<std::vector<float>> images;  // per batch
  std::vector<int64_t> batchSizes;
};

Epoch readEpoch(DataLoader& loader, int64_t epoch) {
  loader.startEpoch(epoch);
  Epoch result;
  Batch batch;
  while (loader.next(batch)) {
    EXPECT_EQ(batch.images.dim(0), batch.labels.dim(0));
    EXPECT_EQ(batch.images.shape(), (Shape{batch.labels.dim(0), 2, 1, 1}));
    const int64_t* labels = batch.labels.data<int64_t>();
    result.labels.insert(result.labels.end(), labels, labels + batch.labels.dim(0));
    result.images.push_back(batch.images.toVector());
    result.batchSizes.push_back(batch.labels.dim(0));
  }
  return result;
}

DataLoaderOptions options(int64_t batchSize, int workers, uint64_t seed = 7) {
  DataLoaderOptions result;
  result.batchSize = batchSize;
  result.workers = workers;
  result.prefetchBatches = 2;
  result.seed = seed;
  return result;
}

std::shared_ptr<const Dataset> indices(int64_t size, int64_t failAt = -1, int sleepUs = 0) {
  return std::make_shared<IndexDataset>(size, failAt, sleepUs);
}

TEST(DataLoader, EveryExampleOncePerEpochAndASmallerLastBatch) {
  for (int workers : {0, 3}) {
    DataLoader loader(indices(10), options(3, workers));
    EXPECT_EQ(loader.batchesPerEpoch(), 4);
    const Epoch epoch = readEpoch(loader, 0);
    EXPECT_EQ(epoch.batchSizes, (std::vector<int64_t>{3, 3, 3, 1}));
    std::vector<int64_t> sorted = epoch.labels;
    std::sort(sorted.begin(), sorted.end());
    std::vector<int64_t> all(10);
    std::iota(all.begin(), all.end(), 0);
    EXPECT_EQ(sorted, all) << workers << " workers";
    EXPECT_NE(epoch.labels, all) << "shuffled";
    EXPECT_EQ(epoch.labels, loader.epochIndices());
  }
}

TEST(DataLoader, WithoutShuffleTheOrderIsTheStoredOne) {
  DataLoaderOptions sequential = options(4, 2);
  sequential.shuffle = false;
  DataLoader loader(indices(10), sequential);
  std::vector<int64_t> all(10);
  std::iota(all.begin(), all.end(), 0);
  EXPECT_EQ(readEpoch(loader, 3).labels, all);
}

TEST(DataLoader, SameSeedSameOrderNewEpochNewOrder) {
  DataLoader first(indices(50), options(8, 2, 11));
  DataLoader second(indices(50), options(8, 2, 11));
  DataLoader otherSeed(indices(50), options(8, 2, 12));
  const Epoch a0 = readEpoch(first, 0);
  const Epoch a1 = readEpoch(first, 1);
  EXPECT_EQ(readEpoch(second, 0).images, a0.images);
  EXPECT_EQ(readEpoch(second, 1).images, a1.images);
  EXPECT_NE(a0.labels, a1.labels);
  EXPECT_NE(readEpoch(otherSeed, 0).labels, a0.labels);
  // Rerunning an epoch repeats it, random draws included.
  EXPECT_EQ(readEpoch(first, 0).images, a0.images);
}

TEST(DataLoader, BatchesDoNotDependOnTheNumberOfWorkers) {
  DataLoader inline0(indices(37, -1, 200), options(5, 0));
  const Epoch expected = readEpoch(inline0, 2);
  for (int workers : {1, 3, 8}) {
    DataLoaderOptions threaded = options(5, workers);
    threaded.prefetchBatches = workers == 8 ? 1 : 3;
    DataLoader loader(indices(37, -1, 200), threaded);
    EXPECT_EQ(readEpoch(loader, 2).images, expected.images) << workers << " workers";
  }
}

// A run resumed after batch 3 of epoch 2 sees exactly the batches an uninterrupted epoch 2 has
// from batch 3 on, random draws included, and the skipped batches are never read: the example
// that fails to read sits in batch 0.
TEST(DataLoader, ContinuingMidEpochGivesTheRestOfThatEpochAndReadsNothingBefore) {
  DataLoader whole(indices(37), options(5, 0));
  const Epoch expected = readEpoch(whole, 2);
  ASSERT_EQ(expected.images.size(), 8u);
  const int64_t inFirstBatch = expected.labels[1];
  for (int workers : {0, 3}) {
    DataLoader loader(indices(37, inFirstBatch), options(5, workers));
    loader.startEpoch(2, 3);
    std::vector<std::vector<float>> rest;
    Batch batch;
    while (loader.next(batch)) rest.push_back(batch.images.toVector());
    EXPECT_EQ(rest,
              std::vector<std::vector<float>>(expected.images.begin() + 3, expected.images.end()))
        << workers << " workers";
    loader.startEpoch(2, 8);  // after the last batch: nothing left
    EXPECT_FALSE(loader.next(batch));
  }
  DataLoader loader(indices(37), options(5, 1));
  const std::string pastTheEnd = errorMessage([&] { loader.startEpoch(2, 9); });
  expectContains(pastTheEnd, "epoch 2 cannot continue at batch 9");
  expectContains(pastTheEnd, "it has 8 batches");
  expectContains(errorMessage([&] { loader.startEpoch(2, -1); }), {"at batch -1"});
}

TEST(DataLoader, ShardsAcrossRanksLikeDistributedSampler) {
  // 10 examples over 3 ranks: 4 each, padded by wrapping, so two examples are seen twice.
  std::multiset<int64_t> seen;
  std::vector<int64_t> firstEpochOrder;
  for (int rank = 0; rank < 3; ++rank) {
    DataLoaderOptions sharded = options(3, 2);
    sharded.rank = rank;
    sharded.worldSize = 3;
    DataLoader loader(indices(10), sharded);
    EXPECT_EQ(loader.examplesPerRank(), 4);
    EXPECT_EQ(loader.batchesPerEpoch(), 2);
    const Epoch epoch = readEpoch(loader, 5);
    EXPECT_EQ(epoch.batchSizes, (std::vector<int64_t>{3, 1}));
    seen.insert(epoch.labels.begin(), epoch.labels.end());
    for (size_t k = 0; k < epoch.labels.size(); ++k) {
      // Rank r holds positions r, r + 3, ... of the one global permutation.
      const size_t position = static_cast<size_t>(rank) + 3 * k;
      if (firstEpochOrder.size() <= position) firstEpochOrder.resize(position + 1, -1);
      firstEpochOrder[position] = epoch.labels[k];
    }
  }
  EXPECT_EQ(seen.size(), 12u);
  for (int64_t i = 0; i < 10; ++i) EXPECT_GE(seen.count(i), 1u) << "example " << i;
  // The padding repeats the start of the permutation.
  EXPECT_EQ(firstEpochOrder[10], firstEpochOrder[0]);
  EXPECT_EQ(firstEpochOrder[11], firstEpochOrder[1]);
  // The global order is the single-rank order.
  DataLoader single(indices(10), options(3, 0));
  EXPECT_EQ(std::vector<int64_t>(firstEpochOrder.begin(), firstEpochOrder.begin() + 10),
            readEpoch(single, 5).labels);
}

TEST(DataLoader, DropLastDropsTheIncompleteBatch) {
  DataLoaderOptions dropping = options(3, 2);
  dropping.dropLast = true;
  DataLoader loader(indices(10), dropping);
  EXPECT_EQ(loader.batchesPerEpoch(), 3);
  EXPECT_EQ(readEpoch(loader, 0).batchSizes, (std::vector<int64_t>{3, 3, 3}));
  dropping.batchSize = 11;
  expectContains(errorMessage([&] { DataLoader(indices(10), dropping); }),
                 "fewer than one batch of 11");
}

TEST(DataLoader, AWorkerExceptionSurfacesInNextNamingTheExample) {
  for (int workers : {0, 3}) {
    DataLoaderOptions sequential = options(4, workers);
    sequential.shuffle = false;
    DataLoader loader(indices(12, 6), sequential);
    loader.startEpoch(0);
    Batch batch;
    ASSERT_TRUE(loader.next(batch));  // examples 0..3
    const std::string message = errorMessage([&] { loader.next(batch); });
    expectContains(message, "reading example 6 (batch 1 of epoch 0) of index dataset failed");
    expectContains(message, "cannot read record 6 (injected failure)");
    // The loader goes on with the next batch.
    ASSERT_TRUE(loader.next(batch));
    EXPECT_EQ(batch.labels.data<int64_t>()[0], 8);
  }
}

TEST(DataLoader, RestartingMidEpochDiscardsBatchesInFlight) {
  DataLoader loader(indices(40, -1, 100), options(4, 3));
  loader.startEpoch(0);
  Batch batch;
  ASSERT_TRUE(loader.next(batch));
  const Epoch restarted = readEpoch(loader, 1);
  DataLoader fresh(indices(40), options(4, 0));
  EXPECT_EQ(restarted.images, readEpoch(fresh, 1).images);
}

TEST(DataLoader, DestroyingWithBatchesInFlightJoinsTheWorkers) {
  for (int i = 0; i < 5; ++i) {
    DataLoader loader(indices(100, -1, 500), options(4, 4));
    loader.startEpoch(0);
    Batch batch;
    ASSERT_TRUE(loader.next(batch));
  }  // no hang, no crash
  DataLoader neverStarted(indices(10), options(4, 2));
}

TEST(DataLoader, NextWithoutStartEpochStartsEpochZero) {
  DataLoader implicit(indices(9), options(4, 2));
  DataLoader explicitZero(indices(9), options(4, 2));
  Epoch implicitEpoch;
  Batch batch;
  while (implicit.next(batch)) implicitEpoch.images.push_back(batch.images.toVector());
  EXPECT_EQ(implicitEpoch.images, readEpoch(explicitZero, 0).images);
  EXPECT_FALSE(implicit.next(batch));  // stays done
}

TEST(DataLoader, PrefetchHidesLoadingBehindTheConsumer) {
  // 2 ms per example, 8 per batch: 16 ms of loading per batch; the consumer "computes" 40 ms.
  // With 4 workers the wait after the first batch should be far below the 16 ms per batch it
  // would be inline. Generous bounds: the machine is shared.
  DataLoader loader(indices(64, -1, 2000), options(8, 4));
  loader.startEpoch(0);
  Batch batch;
  int64_t batches = 0;
  while (loader.next(batch)) {
    ++batches;
    std::this_thread::sleep_for(std::chrono::milliseconds(40));
  }
  EXPECT_EQ(batches, 8);
  EXPECT_LT(loader.waitSeconds(), 0.5 * 8 * 0.016);
}

TEST(DataLoader, BadOptionsAreClearErrors) {
  DataLoaderOptions bad = options(0, 1);
  expectContains(errorMessage([&] { DataLoader(indices(4), bad); }), "batch size must be positive");
  bad = options(2, -1);
  expectContains(errorMessage([&] { DataLoader(indices(4), bad); }), "workers must be >= 0");
  bad = options(2, 1);
  bad.rank = 3;
  bad.worldSize = 3;
  expectContains(errorMessage([&] { DataLoader(indices(4), bad); }),
                 "rank 3 is not in a world of 3");
  expectContains(errorMessage([&] { DataLoader(nullptr, options(2, 1)); }), "no dataset");
  expectContains(errorMessage([&] { DataLoader(indices(0), options(2, 1)); }),
                 "index dataset is empty");
}

TEST(DataLoader, BatchOfMismatchedImagesAsksForAResize) {
  class Ragged final : public Dataset {
   public:
    int64_t size() const override { return 2; }
    Example get(int64_t index, Generator&) const override {
      return {Tensor::zeros({3, 4 + index, 4}), 0};
    }
    Shape imageShape() const override { return {3, 4, 4}; }
    int64_t classes() const override { return 1; }
    std::string describe() const override { return "ragged"; }
  };
  DataLoaderOptions sequential = options(2, 1);
  sequential.shuffle = false;
  DataLoader loader(std::make_shared<Ragged>(), sequential);
  Batch batch;
  const std::string message = errorMessage([&] { loader.next(batch); });
  expectContains(message, "example 1 of ragged has shape [3, 5, 4]");
  expectContains(message, "add a resize or crop");
}

}  // namespace
}  // namespace imerge::data
