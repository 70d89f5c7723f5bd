// End to end: the small CNN of models/small_cnn.h, trained for two epochs on the real
// Fashion-MNIST through the DataLoader with a fixed seed, must reach 88% test accuracy. This
// is the loop imerge-train runs. It takes about a minute on two cores ("slow" label).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "core/device.h"
#include "data/idx_dataset.h"
#include "models/small_cnn.h"
#include "training/classifier_training.h"

namespace imerge {
namespace {

TEST(FashionMnistTraining, SmallCnnReaches88PercentInTwoEpochs) {
  ASSERT_TRUE(std::filesystem::exists(data::kFashionMnistDirectory))
      << data::kFashionMnistDirectory
      << " is missing: 'apt-get install -y dataset-fashion-mnist' provides it";
  setNumThreads(2);
  Generator generator(2024);
  manualSeed(2024);  // dropout

  const auto normal = data::normalize({0.2860f}, {0.3530f});
  auto train = std::make_shared<data::IdxImageDataset>(
      "fashion-mnist", data::kFashionMnistDirectory, "train", normal);
  auto test = std::make_shared<data::IdxImageDataset>("fashion-mnist", data::kFashionMnistDirectory,
                                                      "test", normal);
  data::DataLoader trainLoader(train, {.batchSize = 64, .workers = 1, .seed = 2024});
  data::DataLoader testLoader(test, {.batchSize = 256, .shuffle = false, .workers = 1});

  auto model = models::smallCnn(1, 10, generator);
  const int64_t epochs = 2;
  optim::Sgd optimizer(model->parameters(),
                       {.learningRate = 0.05f, .momentum = 0.9f, .weightDecay = 5e-4f});
  optim::LrSchedule schedule({.kind = optim::LrScheduleKind::Cosine,
                              .baseLr = 0.05f,
                              .totalEpochs = static_cast<double>(epochs)});

  training::EpochResult tested;
  for (int64_t epoch = 0; epoch < epochs; ++epoch) {
    training::EpochResult trained =
        training::trainEpoch(*model, optimizer, schedule, trainLoader, epoch);
    tested = training::evaluate(*model, testLoader);
    std::printf(
        "epoch %lld: train loss %.4f accuracy %.2f%% (%.0f images/s, %.2f s waiting for "
        "data), test accuracy %.2f%%\n",
        static_cast<long long>(epoch + 1), trained.loss, 100 * trained.accuracy,
        trained.imagesPerSecond, trained.dataWaitSeconds, 100 * tested.accuracy);
    ASSERT_TRUE(std::isfinite(trained.loss));
    EXPECT_EQ(trained.images, 60000);
  }
  EXPECT_GE(tested.accuracy, 0.88);
  EXPECT_EQ(tested.images, 10000);
}

}  // namespace
}  // namespace imerge
