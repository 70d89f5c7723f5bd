// End to end: the small CNN of the README's first run, trained for two epochs on the real
// Fashion-MNIST with a fixed seed, must reach 88% test accuracy. This is the same loop that
// imerge-train runs. It takes about a minute on two cores, so it carries the "slow" label.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "apps/classifier_training.h"
#include "core/device.h"
#include "data/idx_reader.h"
#include "models/small_cnn.h"

namespace imerge {
namespace {

constexpr const char* kFashionMnist = "/usr/share/datasets/fashion-mnist";

TEST(FashionMnistTraining, SmallCnnReaches88PercentInTwoEpochs) {
  ASSERT_TRUE(std::filesystem::exists(kFashionMnist))
      << kFashionMnist << " is missing: 'apt-get install -y dataset-fashion-mnist' provides it";
  setNumThreads(2);
  Generator generator(2024);

  data::IdxDataset train = data::loadIdxDataset(kFashionMnist, "train");
  data::IdxDataset test = data::loadIdxDataset(kFashionMnist, "t10k");
  data::normalizeInPlace(train.images, 0.2860f, 0.3530f);
  data::normalizeInPlace(test.images, 0.2860f, 0.3530f);
  data::ShuffledBatches trainBatches(train.images, train.labels, 64, true);
  data::ShuffledBatches testBatches(test.images, test.labels, 256, false);

  auto model = models::smallCnn(1, 10, generator);
  const int64_t epochs = 2;
  layers::Sgd optimizer(model->parameters(),
                        {.learningRate = 0.05f, .momentum = 0.9f, .weightDecay = 5e-4f});
  layers::LrSchedule schedule({.kind = layers::LrScheduleKind::Cosine,
                               .baseLr = 0.05f,
                               .totalEpochs = static_cast<double>(epochs)});

  apps::EpochResult tested;
  for (int64_t epoch = 0; epoch < epochs; ++epoch) {
    apps::EpochResult trained =
        apps::trainEpoch(*model, optimizer, schedule, trainBatches, generator, epoch);
    tested = apps::evaluate(*model, testBatches);
    std::printf(
        "epoch %lld: train loss %.4f accuracy %.2f%% (%.0f images/s), test accuracy "
        "%.2f%%\n",
        static_cast<long long>(epoch + 1), trained.loss, 100 * trained.accuracy,
        trained.imagesPerSecond, 100 * tested.accuracy);
    ASSERT_TRUE(std::isfinite(trained.loss));
  }
  EXPECT_GE(tested.accuracy, 0.88);
  EXPECT_EQ(tested.images, 10000);
}

}  // namespace
}  // namespace imerge
