// imerge-train: trains an image classifier from the command line.
//
//   imerge-train                                   ResNet-20 on Fashion-MNIST
//   imerge-train --model resnet18 --dataset cifar10 --data-dir DIR --epochs 30
//   imerge-train --checkpoint-dir ck --epochs 2    then --resume ck/last.ckpt --epochs 3
//
// It prints progress (a bar on a terminal, plain lines elsewhere), evaluates on the test split,
// writes a JSON metrics log with --log-json and a checkpoint per epoch with --checkpoint-dir.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <thread>

#include "apps/classifier_training.h"
#include "apps/dataset_choice.h"
#include "apps/metrics_log.h"
#include "apps/progress_bar.h"
#include "core/cuda/cuda_device.h"
#include "core/device.h"
#include "core/random.h"
#include "layers/checkpoint.h"
#include "models/registry.h"

namespace {

using namespace imerge;

struct Options {
  std::string model = "resnet20";
  apps::DatasetChoice dataset;
  int64_t epochs = 3;
  int64_t batchSize = 64;
  float learningRate = 0.1f;
  float momentum = 0.9f;
  float weightDecay = 5e-4f;
  bool nesterov = false;
  std::string lrSchedule = "cosine";
  double warmupEpochs = 0;
  int threads = 0;
  int workers = 2;
  uint64_t seed = 1;
  std::string device = "cpu";
  std::string checkpointDir;
  std::string resume;
  int64_t evalEvery = 1;
  std::string logJson;
  int64_t maxSteps = 0;
  int64_t stopAfterEpochs = 0;
  int64_t logEvery = 100;
};

std::string percent(double fraction) {
  char text[16];
  std::snprintf(text, sizeof text, "%.2f%%", 100 * fraction);
  return text;
}

std::string stepFigures(const apps::StepProgress& p) {
  char text[128];
  std::snprintf(text, sizeof text, "loss %.4f  acc %s  %.0f img/s  lr %.4f", p.loss,
                percent(p.accuracy).c_str(), p.imagesPerSecond, p.learningRate);
  return text;
}

int run(const Options& options) {
  if (options.device == "cuda") {
    requireCudaDevice();
    IMERGE_FAIL(
        "--device cuda: a GPU is present, but this build has no CUDA kernels yet (the "
        "CUDA backend issue adds them); use --device cpu");
  }
  setNumThreads(options.threads > 0 ? options.threads
                                    : static_cast<int>(std::thread::hardware_concurrency()));
  manualSeed(options.seed);  // dropout and initialisation draw from the default generator

  apps::DatasetChoice datasetChoice = options.dataset;
  datasetChoice.seed = options.seed;
  apps::DatasetSplits splits = apps::openDatasets(datasetChoice);
  std::cout << "data: " << splits.train->describe() << "\n      " << splits.test->describe()
            << "\n";

  const Shape imageShape = splits.train->imageShape();
  auto model = models::buildModel(options.model,
                                  {.inChannels = imageShape[0],
                                   .classes = splits.train->classes(),
                                   .smallImages = splits.smallImages},
                                  defaultGenerator());
  std::cout << "model: " << options.model << ", " << model->parameterCount() << " parameters, "
            << numThreads() << " threads\n";

  layers::Sgd optimizer(model->parameters(), {.learningRate = options.learningRate,
                                              .momentum = options.momentum,
                                              .weightDecay = options.weightDecay,
                                              .nesterov = options.nesterov});
  layers::LrSchedule schedule({.kind = layers::LrSchedule::parseKind(options.lrSchedule),
                               .baseLr = options.learningRate,
                               .warmupEpochs = options.warmupEpochs,
                               .stepEpochs = std::max<double>(1, options.epochs / 3.0),
                               .totalEpochs = static_cast<double>(options.epochs)});

  data::DataLoader trainLoader(splits.train, {.batchSize = options.batchSize,
                                              .shuffle = true,
                                              .workers = options.workers,
                                              .seed = options.seed});
  data::DataLoader testLoader(
      splits.test,
      {.batchSize = 256, .shuffle = false, .workers = options.workers, .seed = options.seed});

  int64_t firstEpoch = 0;
  int64_t globalStep = 0;
  if (!options.resume.empty()) {
    layers::TrainingState state =
        layers::loadCheckpoint(options.resume, options.model, *model, &optimizer);
    firstEpoch = state.epoch;
    globalStep = state.step;
    defaultGenerator().setState(state.rngStates.at("default"));
    std::cout << "resumed from " << options.resume << " after epoch " << firstEpoch << "\n";
    IMERGE_CHECK(firstEpoch < options.epochs, "--resume: ", options.resume, " already holds ",
                 firstEpoch, " epochs; ask for more with --epochs (now ", options.epochs, ")");
  }
  if (!options.checkpointDir.empty()) std::filesystem::create_directories(options.checkpointDir);

  apps::MetricsLog log(options.logJson, {{"model", options.model},
                                         {"dataset", options.dataset.name},
                                         {"batch_size", options.batchSize},
                                         {"epochs", options.epochs},
                                         {"lr", options.learningRate},
                                         {"momentum", options.momentum},
                                         {"weight_decay", options.weightDecay},
                                         {"lr_schedule", options.lrSchedule},
                                         {"threads", numThreads()},
                                         {"seed", options.seed}});
  if (firstEpoch > 0) log.keepEpochsBefore(firstEpoch);

  const int64_t lastEpoch = options.stopAfterEpochs > 0
                                ? std::min(options.epochs, firstEpoch + options.stopAfterEpochs)
                                : options.epochs;
  for (int64_t epoch = firstEpoch; epoch < lastEpoch; ++epoch) {
    const std::string label =
        "epoch " + std::to_string(epoch + 1) + "/" + std::to_string(options.epochs);
    apps::ProgressBar bar(
        label,
        std::max<int64_t>(1, options.maxSteps > 0
                                 ? std::min(options.maxSteps, trainLoader.batchesPerEpoch())
                                 : trainLoader.batchesPerEpoch()),
        options.logEvery);
    std::string lastFigures;
    apps::EpochResult trained =
        apps::trainEpoch(*model, optimizer, schedule, trainLoader, epoch, options.maxSteps,
                         [&](const apps::StepProgress& p) {
                           lastFigures = stepFigures(p);
                           bar.update(p.step, lastFigures);
                         });
    bar.finish(lastFigures);
    globalStep += trained.steps;

    nlohmann::json record = {{"epoch", epoch + 1},
                             {"train_loss", trained.loss},
                             {"train_accuracy", trained.accuracy},
                             {"images_per_second", trained.imagesPerSecond},
                             {"seconds", trained.seconds},
                             {"data_wait_seconds", trained.dataWaitSeconds},
                             {"steps", globalStep}};
    if (epoch + 1 == lastEpoch || (epoch + 1) % options.evalEvery == 0) {
      apps::EpochResult tested = apps::evaluate(*model, testLoader);
      record["test_loss"] = tested.loss;
      record["test_accuracy"] = tested.accuracy;
      std::cout << "  test: loss " << tested.loss << ", accuracy " << percent(tested.accuracy)
                << " on " << tested.images << " images\n";
    }
    log.addEpoch(record);

    if (!options.checkpointDir.empty()) {
      const std::string path = options.checkpointDir + "/last.ckpt";
      layers::saveCheckpoint(path, *model, &optimizer,
                             {.modelName = options.model,
                              .epoch = epoch + 1,
                              .step = globalStep,
                              .rngStates = {{"default", defaultGenerator().state()}},
                              .metadata = {{"dataset", options.dataset.name},
                                           {"seed", std::to_string(options.seed)},
                                           {"batch_size", std::to_string(options.batchSize)}}});
      std::cout << "  checkpoint: " << path << "\n";
    }
    std::cout.flush();
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  CLI::App app{"imerge-train: train an image classifier"};
  app.add_option("--model", options.model, "model name (resnet20, resnet18, vgg16_bn, alexnet...)")
      ->capture_default_str();
  app.add_option("--dataset", options.dataset.name, apps::datasetNames())->capture_default_str();
  app.add_option("--data-dir", options.dataset.directory,
                 "dataset folder (default for fashion-mnist: /usr/share/datasets/fashion-mnist)");
  app.add_option("--image-size", options.dataset.imageSize,
                 "side of the images for imagenet-folder and synthetic")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_flag("--strict-data", options.dataset.strict,
               "a corrupt image is an error instead of a warning and a skip");
  app.add_option("--batch-size", options.batchSize, "images per step")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--epochs", options.epochs, "passes over the training set")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--lr", options.learningRate, "base learning rate")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--momentum", options.momentum, "SGD momentum")
      ->check(CLI::Range(0.0f, 1.0f))
      ->capture_default_str();
  app.add_flag("--nesterov", options.nesterov, "Nesterov momentum");
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
  app.add_option("--workers", options.workers, "data-loading threads")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--seed", options.seed, "random seed")->capture_default_str();
  app.add_option("--device", options.device, "cpu or cuda")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  app.add_option("--checkpoint-dir", options.checkpointDir,
                 "write <dir>/last.ckpt after every epoch");
  app.add_option("--resume", options.resume, "continue from this checkpoint")
      ->check(CLI::ExistingFile);
  app.add_option("--eval-every", options.evalEvery, "evaluate every this many epochs (and last)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--log-json", options.logJson, "write per-epoch metrics to this JSON file");
  app.add_option("--max-steps", options.maxSteps, "stop each epoch after this many steps (0: all)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--stop-after-epochs", options.stopAfterEpochs,
                 "stop after this many epochs of the schedule (resume later with --resume)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--log-every", options.logEvery,
                 "print a progress line every this many steps when not on a terminal")
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
