// imerge-train: trains an image classifier from the command line.
//
// For now it trains the small CNN of models/small_cnn.h on Fashion-MNIST (the IDX files of
// Debian's dataset-fashion-mnist) and reports loss, accuracy and images/s; the models and data
// pipeline issue adds the model zoo, more datasets and checkpoints.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <thread>

#include "apps/classifier_training.h"
#include "core/device.h"
#include "core/random.h"
#include "data/idx_reader.h"
#include "models/small_cnn.h"

namespace {

using namespace imerge;

struct Options {
  std::string dataDir = "/usr/share/datasets/fashion-mnist";
  int64_t epochs = 1;
  int64_t batchSize = 64;
  float learningRate = 0.05f;
  float momentum = 0.9f;
  float weightDecay = 5e-4f;
  std::string lrSchedule = "cosine";
  double warmupEpochs = 0;
  int threads = 0;
  uint64_t seed = 1;
  int64_t maxSteps = 0;
  int64_t logEvery = 100;
};

// Fashion-MNIST's mean and standard deviation over the training images.
constexpr float kFashionMean = 0.2860f;
constexpr float kFashionStd = 0.3530f;

int run(const Options& options) {
  setNumThreads(options.threads > 0 ? options.threads
                                    : static_cast<int>(std::thread::hardware_concurrency()));
  manualSeed(options.seed);

  data::IdxDataset train = data::loadIdxDataset(options.dataDir, "train");
  data::IdxDataset test = data::loadIdxDataset(options.dataDir, "t10k");
  data::normalizeInPlace(train.images, kFashionMean, kFashionStd);
  data::normalizeInPlace(test.images, kFashionMean, kFashionStd);
  std::printf("fashion-mnist: %lld training and %lld test images from %s\n",
              static_cast<long long>(train.images.dim(0)),
              static_cast<long long>(test.images.dim(0)), options.dataDir.c_str());

  auto model = models::smallCnn(1, 10, defaultGenerator());
  std::printf("model: small CNN, %lld parameters, %d threads\n",
              static_cast<long long>(model->parameterCount()), numThreads());

  layers::Sgd optimizer(model->parameters(), {.learningRate = options.learningRate,
                                              .momentum = options.momentum,
                                              .weightDecay = options.weightDecay});
  layers::LrSchedule schedule({.kind = layers::LrSchedule::parseKind(options.lrSchedule),
                               .baseLr = options.learningRate,
                               .warmupEpochs = options.warmupEpochs,
                               .stepEpochs = std::max<double>(1, options.epochs / 3.0),
                               .totalEpochs = static_cast<double>(options.epochs)});

  data::ShuffledBatches trainBatches(train.images, train.labels, options.batchSize, true);
  data::ShuffledBatches testBatches(test.images, test.labels, 256, false);
  if (options.maxSteps > 0) {
    // A short run: keep only as many images as maxSteps batches need.
    const int64_t keep = std::min(train.images.dim(0), options.maxSteps * options.batchSize);
    trainBatches = data::ShuffledBatches(train.images.flatView(0, {keep, 1, 28, 28}),
                                         train.labels.flatView(0, {keep}), options.batchSize, true);
  }

  for (int64_t epoch = 0; epoch < options.epochs; ++epoch) {
    auto report = [&](const apps::StepProgress& p) {
      if (p.step % options.logEvery != 0 && p.step != p.stepsPerEpoch) return;
      std::printf("epoch %lld step %lld/%lld  loss %.4f  accuracy %.2f%%  %.0f images/s  lr %.4f\n",
                  static_cast<long long>(p.epoch + 1), static_cast<long long>(p.step),
                  static_cast<long long>(p.stepsPerEpoch), p.loss, 100 * p.accuracy,
                  p.imagesPerSecond, p.learningRate);
      std::fflush(stdout);
    };
    apps::EpochResult trained = apps::trainEpoch(*model, optimizer, schedule, trainBatches,
                                                 defaultGenerator(), epoch, report);
    apps::EpochResult tested = apps::evaluate(*model, testBatches);
    std::printf(
        "epoch %lld done in %.1f s: train loss %.4f accuracy %.2f%%, test loss %.4f "
        "accuracy %.2f%%, %.0f training images/s\n",
        static_cast<long long>(epoch + 1), trained.seconds, trained.loss, 100 * trained.accuracy,
        tested.loss, 100 * tested.accuracy, trained.imagesPerSecond);
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  CLI::App app{"imerge-train: train an image classifier (now: a small CNN on Fashion-MNIST)"};
  app.add_option("--data-dir", options.dataDir, "folder with the Fashion-MNIST IDX files")
      ->capture_default_str();
  app.add_option("--epochs", options.epochs, "passes over the training set")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--batch-size", options.batchSize, "images per step")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--lr", options.learningRate, "base learning rate")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--momentum", options.momentum, "SGD momentum")
      ->check(CLI::Range(0.0f, 1.0f))
      ->capture_default_str();
  app.add_option("--weight-decay", options.weightDecay, "L2 weight decay")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--lr-schedule", options.lrSchedule, "learning-rate schedule")
      ->check(CLI::IsMember({"constant", "step", "cosine"}))
      ->capture_default_str();
  app.add_option("--warmup-epochs", options.warmupEpochs, "linear warm-up length in epochs")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--threads", options.threads, "CPU threads (0: all cores)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--seed", options.seed, "random seed")->capture_default_str();
  app.add_option("--max-steps", options.maxSteps, "stop each epoch after this many steps (0: all)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--log-every", options.logEvery, "print progress every this many steps")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  try {
    return run(options);
  } catch (const std::exception& error) {
    std::cerr << "imerge-train: error: " << error.what() << "\n";
    return 1;
  }
}
