#include "data/data_loader.h"

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <iostream>
#include <map>
#include <mutex>
#include <numeric>
#include <thread>

#include "data/seeding.h"

namespace imerge::data {
namespace {

using Clock = std::chrono::steady_clock;

// A decoded batch or the exception that stopped it.
struct BatchResult {
  Batch batch;
  std::exception_ptr error;
};

}  // namespace

struct DataLoader::State {
  std::shared_ptr<const Dataset> dataset;
  DataLoaderOptions options;
  int64_t perRank = 0;  // examples per rank and epoch, before dropLast
  int64_t batches = 0;  // per epoch

  std::mutex mutex;
  std::condition_variable workAvailable;  // workers wait here
  std::condition_variable batchReady;     // the consumer waits here
  bool stopping = false;
  bool started = false;
  uint64_t generation = 0;  // bumped by startEpoch, so stale batches are dropped
  int64_t epoch = 0;
  std::shared_ptr<const std::vector<int64_t>> indices;  // this rank's, this epoch
  int64_t nextToClaim = 0;                              // next batch a worker decodes
  int64_t nextToReturn = 0;                             // next batch next() returns
  std::map<int64_t, BatchResult> ready;                 // decoded, not yet returned
  double waitSeconds = 0;
  bool endReported = false;
  int64_t skippedReported = 0;
  std::vector<std::thread> workers;

  std::vector<int64_t> shardFor(int64_t epochNumber) const;
  Batch makeBatch(const std::vector<int64_t>& shard, int64_t batch, int64_t epochNumber) const;
  void workerLoop();
  void warn(const std::string& message) const {
    if (options.warn) {
      options.warn(message);
    } else {
      std::cerr << message << '\n';
    }
  }
};

std::vector<int64_t> DataLoader::State::shardFor(int64_t epochNumber) const {
  const int64_t total = dataset->size();
  std::vector<int64_t> order(static_cast<size_t>(total));
  std::iota(order.begin(), order.end(), int64_t{0});
  if (options.shuffle) {
    // Fisher-Yates; every rank draws the same permutation.
    Generator generator(mixSeeds(options.seed, static_cast<uint64_t>(epochNumber)));
    for (size_t i = order.size(); i > 1; --i) {
      std::swap(order[i - 1], order[generator.nextInt(i)]);
    }
  }
  // DistributedSampler: pad by wrapping to perRank * worldSize, then take every worldSize-th.
  std::vector<int64_t> shard(static_cast<size_t>(perRank));
  for (int64_t k = 0; k < perRank; ++k) {
    const int64_t position = options.rank + k * options.worldSize;
    shard[static_cast<size_t>(k)] = order[static_cast<size_t>(position % total)];
  }
  return shard;
}

Batch DataLoader::State::makeBatch(const std::vector<int64_t>& shard, int64_t batch,
                                   int64_t epochNumber) const {
  const int64_t first = batch * options.batchSize;
  const int64_t count = std::min(options.batchSize, perRank - first);
  Batch out;
  out.labels = Tensor::empty({count}, DType::Int64);  // [B]
  int64_t* labels = out.labels.data<int64_t>();
  Shape imageShape;
  for (int64_t i = 0; i < count; ++i) {
    const int64_t index = shard[static_cast<size_t>(first + i)];
    Example example;
    try {
      // The generator depends on the example, not on the thread or the batch it lands in.
      Generator generator(mixSeeds(
          {options.seed, static_cast<uint64_t>(epochNumber), static_cast<uint64_t>(index)}));
      example = dataset->get(index, generator);
    } catch (const std::exception& error) {
      IMERGE_FAIL("DataLoader: reading example ", index, " (batch ", batch, " of epoch ",
                  epochNumber, ") of ", dataset->describe(), " failed: ", error.what());
    }
    IMERGE_CHECK(example.image.defined() && example.image.dtype() == DType::Float32 &&
                     example.image.ndim() == 3,
                 "DataLoader: example ", index, " of ", dataset->describe(),
                 " is not a float32 image [C, H, W]: ",
                 example.image.defined() ? example.image.describe() : std::string("undefined"));
    if (i == 0) {
      imageShape = example.image.shape();
      Shape batchShape = imageShape;
      batchShape.insert(batchShape.begin(), count);
      out.images = Tensor::empty(batchShape);  // [B, C, H, W]
    }
    IMERGE_CHECK(example.image.shape() == imageShape, "DataLoader: example ", index, " of ",
                 dataset->describe(), " has shape ", shapeToString(example.image.shape()),
                 " but example ", shard[static_cast<size_t>(first)], " in the same batch has ",
                 shapeToString(imageShape),
                 "; add a resize or crop transform so that every image has one size");
    const int64_t elements = example.image.numel();
    std::memcpy(out.images.data<float>() + i * elements, example.image.data<float>(),
                sizeof(float) * static_cast<size_t>(elements));
    labels[i] = example.label;
  }
  return out;
}

void DataLoader::State::workerLoop() {
  std::unique_lock lock(mutex);
  while (true) {
    workAvailable.wait(lock, [&] {
      return stopping || (started && nextToClaim < batches &&
                          nextToClaim < nextToReturn + options.prefetchBatches);
    });
    if (stopping) return;
    const int64_t batch = nextToClaim++;
    const uint64_t claimedGeneration = generation;
    const int64_t claimedEpoch = epoch;
    const std::shared_ptr<const std::vector<int64_t>> shard = indices;
    lock.unlock();
    BatchResult result;
    try {
      result.batch = makeBatch(*shard, batch, claimedEpoch);
    } catch (...) {
      result.error = std::current_exception();
    }
    lock.lock();
    if (claimedGeneration == generation) {
      ready.emplace(batch, std::move(result));
      batchReady.notify_all();
    }
  }
}

DataLoader::DataLoader(std::shared_ptr<const Dataset> dataset, const DataLoaderOptions& options)
    : state_(std::make_unique<State>()) {
  IMERGE_CHECK(dataset != nullptr, "DataLoader: no dataset");
  IMERGE_CHECK(options.batchSize > 0, "DataLoader: batch size must be positive, got ",
               options.batchSize);
  IMERGE_CHECK(options.workers >= 0, "DataLoader: workers must be >= 0, got ", options.workers);
  IMERGE_CHECK(options.prefetchBatches >= 1, "DataLoader: prefetchBatches must be >= 1, got ",
               options.prefetchBatches);
  IMERGE_CHECK(options.worldSize >= 1 && options.rank >= 0 && options.rank < options.worldSize,
               "DataLoader: rank ", options.rank, " is not in a world of ", options.worldSize);
  IMERGE_CHECK(dataset->size() > 0, "DataLoader: ", dataset->describe(), " is empty");
  State& state = *state_;
  state.dataset = std::move(dataset);
  state.options = options;
  state.perRank = (state.dataset->size() + options.worldSize - 1) / options.worldSize;
  state.batches = options.dropLast ? state.perRank / options.batchSize
                                   : (state.perRank + options.batchSize - 1) / options.batchSize;
  IMERGE_CHECK(state.batches > 0, "DataLoader: ", state.dataset->describe(), " gives rank ",
               options.rank, " of ", options.worldSize, " only ", state.perRank,
               " examples, fewer than one batch of ", options.batchSize,
               " with dropLast; use a smaller batch or keep the last batch");
  state.workers.reserve(static_cast<size_t>(options.workers));
  for (int i = 0; i < options.workers; ++i) {
    state.workers.emplace_back([&state] { state.workerLoop(); });
  }
}

DataLoader::~DataLoader() {
  {
    std::lock_guard lock(state_->mutex);
    state_->stopping = true;
  }
  state_->workAvailable.notify_all();
  for (std::thread& worker : state_->workers) worker.join();
}

void DataLoader::startEpoch(int64_t epoch, int64_t firstBatch) {
  State& state = *state_;
  IMERGE_CHECK(firstBatch >= 0 && firstBatch <= state.batches, "DataLoader: epoch ", epoch,
               " cannot continue at batch ", firstBatch, ": it has ", state.batches, " batches");
  auto shard = std::make_shared<const std::vector<int64_t>>(state.shardFor(epoch));
  std::map<int64_t, BatchResult> stale;
  {
    std::lock_guard lock(state.mutex);
    ++state.generation;
    state.started = true;
    state.epoch = epoch;
    state.indices = std::move(shard);
    state.nextToClaim = firstBatch;
    state.nextToReturn = firstBatch;
    state.waitSeconds = 0;
    state.endReported = false;
    stale.swap(state.ready);  // freed outside the lock
  }
  state.workAvailable.notify_all();
}

bool DataLoader::next(Batch& batch) {
  State& state = *state_;
  if (!state.started) startEpoch(0);
  std::unique_lock lock(state.mutex);
  if (state.nextToReturn >= state.batches) {
    // The end of the epoch: say once how many examples could not be read so far.
    const int64_t skipped = state.dataset->skippedExamples();
    if (!state.endReported && skipped > state.skippedReported) {
      state.warn("warning: " + std::to_string(skipped) + " example(s) of " +
                 state.dataset->describe() +
                 " could not be decoded and were skipped so far (each named above)");
      state.skippedReported = skipped;
    }
    state.endReported = true;
    return false;
  }
  const int64_t wanted = state.nextToReturn;
  BatchResult result;
  const auto waitStart = Clock::now();
  if (state.workers.empty()) {
    // No workers: decode here; all of it is time the training loop waits.
    const std::shared_ptr<const std::vector<int64_t>> shard = state.indices;
    const int64_t epoch = state.epoch;
    ++state.nextToReturn;
    lock.unlock();
    try {
      result.batch = state.makeBatch(*shard, wanted, epoch);
    } catch (...) {
      result.error = std::current_exception();
    }
    lock.lock();
  } else {
    state.batchReady.wait(lock, [&] { return state.ready.count(wanted) > 0; });
    auto found = state.ready.find(wanted);
    result = std::move(found->second);
    state.ready.erase(found);
    ++state.nextToReturn;
    state.workAvailable.notify_all();
  }
  state.waitSeconds += std::chrono::duration<double>(Clock::now() - waitStart).count();
  lock.unlock();
  if (result.error) std::rethrow_exception(result.error);
  batch = std::move(result.batch);
  return true;
}

int64_t DataLoader::batchesPerEpoch() const {
  return state_->batches;
}

int64_t DataLoader::examplesPerRank() const {
  return state_->perRank;
}

std::vector<int64_t> DataLoader::epochIndices() const {
  State& state = *state_;
  std::lock_guard lock(state.mutex);
  if (!state.indices) return state.shardFor(0);
  return *state.indices;
}

double DataLoader::waitSeconds() const {
  std::lock_guard lock(state_->mutex);
  return state_->waitSeconds;
}

const Dataset& DataLoader::dataset() const {
  return *state_->dataset;
}

}  // namespace imerge::data
