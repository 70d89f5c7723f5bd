#include "data/shuffled_batches.h"

#include <cstring>
#include <numeric>

namespace imerge::data {

ShuffledBatches::ShuffledBatches(Tensor images, Tensor labels, int64_t batchSize, bool shuffle)
    : images_(std::move(images)),
      labels_(std::move(labels)),
      batchSize_(batchSize),
      shuffle_(shuffle),
      order_(static_cast<size_t>(images_.dim(0))) {
  IMERGE_CHECK(batchSize > 0, "batch size must be positive, got ", batchSize);
  IMERGE_CHECK(images_.ndim() == 4, "images must be [N, C, H, W], got ", images_.describe());
  IMERGE_CHECK(
      labels_.dtype() == DType::Int64 && labels_.ndim() == 1 && labels_.dim(0) == images_.dim(0),
      "labels ", labels_.describe(), " do not match images ", images_.describe());
  std::iota(order_.begin(), order_.end(), int64_t{0});
}

void ShuffledBatches::startEpoch(Generator& generator) {
  position_ = 0;
  if (!shuffle_) return;
  // Fisher-Yates from the seeded generator, so every run with one seed sees one order.
  for (size_t i = order_.size(); i > 1; --i) {
    std::swap(order_[i - 1], order_[generator.nextInt(i)]);
  }
}

bool ShuffledBatches::next(Batch& batch) {
  const int64_t total = size();
  if (position_ >= total) return false;
  const int64_t count = std::min(batchSize_, total - position_);
  Shape shape = images_.shape();
  shape[0] = count;
  const int64_t imageElements = images_.numel() / total;
  batch.images = Tensor::empty(shape);
  batch.labels = Tensor::empty({count}, DType::Int64);
  const float* source = images_.data<float>();
  const int64_t* sourceLabels = labels_.data<int64_t>();
  float* target = batch.images.data<float>();
  int64_t* targetLabels = batch.labels.data<int64_t>();
  for (int64_t i = 0; i < count; ++i) {
    const int64_t index = order_[position_ + i];
    std::memcpy(target + i * imageElements, source + index * imageElements,
                sizeof(float) * imageElements);
    targetLabels[i] = sourceLabels[index];
  }
  position_ += count;
  return true;
}

int64_t ShuffledBatches::batchesPerEpoch() const {
  return (size() + batchSize_ - 1) / batchSize_;
}

void normalizeInPlace(Tensor& images, float mean, float stddev) {
  float* values = images.data<float>();
  const float inverse = 1.0f / stddev;
  for (int64_t i = 0; i < images.numel(); ++i) values[i] = (values[i] - mean) * inverse;
}

}  // namespace imerge::data
