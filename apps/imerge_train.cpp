// imerge-train: trains an image classifier from the command line.
//
//   imerge-train                                   ResNet-20 on Fashion-MNIST
//   imerge-train --model resnet18 --dataset cifar10 --data-dir DIR --epochs 30
//   imerge-train --checkpoint-dir ck --epochs 2    then --resume ck/last.ckpt --epochs 3
//   mpirun -np 4 imerge-train --dist imerge ...    data-parallel over 4 ranks
//   mpirun -np 2 imerge-train --dist imerge --device cuda    a GPU per rank, NCCL
//
// It prints progress (a bar on a terminal, plain lines elsewhere), evaluates on the test split,
// writes a JSON metrics log with --log-json and a checkpoint per epoch with --checkpoint-dir.
// With --dist every rank trains on its shard of the data and the gradients are all-reduced by
// the chosen strategy inside backward; only rank 0 prints, logs and writes checkpoints, and
// every rank can resume from them.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <thread>

#include "apps/flag_checks.h"
#include "apps/planner_flags.h"
#include "apps/rank_exit_report.h"
#include "apps/run_metadata.h"
#include "apps/stop_signals.h"
#include "autograd/grad_mode.h"
#include "core/cuda/cuda_device.h"
#include "core/device.h"
#include "core/gpu_policy/cuda_settings.h"
#include "core/random.h"
#include "data/image_folder.h"
#include "distributed/comm/device_communicator.h"
#include "distributed/comm/mpi_communicator.h"
#include "distributed/planning/comm_model.h"
#include "distributed/planning/trace.h"
#include "distributed/runtime/data_parallel.h"
#include "distributed/runtime/stop_agreement.h"
#include "io/checkpoint.h"
#include "io/stale_temporaries.h"
#include "models/registry.h"
#include "training/classifier_training.h"
#include "training/dataset_agreement.h"
#include "training/dataset_choice.h"
#include "training/metrics_log.h"
#include "training/progress_bar.h"

namespace {

using namespace imerge;

// The samples of a --comm-model style flag's CSV at this run's `ranks`; none when the flag was
// not given. A sweep of several rank counts in one file (scripts/slow-network-agreement.sh
// writes one) gives the rows of this run's count; a file of a single count, or without a
// `workers` column, is taken whole. Several counts without this one are refused, naming them.
std::vector<distributed::CommSample> samplesFrom(const std::string& flag, const std::string& path,
                                                 int ranks) {
  if (path.empty()) return {};
  std::vector<distributed::CommSample> samples = distributed::readCommSamplesCsv(path);
  std::set<int> counts;
  std::vector<distributed::CommSample> mine;
  for (const distributed::CommSample& sample : samples) {
    counts.insert(sample.workers);
    if (sample.workers == ranks) mine.push_back(sample);
  }
  if (counts.size() == 1) return samples;
  if (mine.empty()) {
    std::string listed;
    for (int count : counts) listed += (listed.empty() ? "" : ", ") + std::to_string(count);
    IMERGE_FAIL(flag, " ", path, ": samples at ", listed,
                " workers, none at this run's rank count ", ranks,
                "; measure at that count (imerge-commbench under mpirun -np ", ranks,
                ") or leave the flag out to measure at start-up");
  }
  return mine;
}

struct Options {
  std::string model = "resnet20";
  training::DatasetChoice dataset;
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
  bool deterministic = false;  // --deterministic: cuDNN algorithms that repeat bit for bit
  bool tf32 = true;            // --no-tf32 turns TF32 convolutions off
  std::string checkpointDir;
  std::string resume;
  bool evaluateOnly = false;  // --evaluate-only: test the --resume checkpoint, train nothing
  int64_t evalEvery = 1;
  std::string logJson;
  int64_t maxSteps = 0;
  int64_t stopAfterEpochs = 0;
  int64_t logEvery = 100;
  // Data parallelism.
  std::string dist;                  // strategy; empty: one process, no communicator
  std::string distBackend = "auto";  // auto: NCCL for a model on a GPU, MPI on the CPU
  distributed::PlannerOptions planner;
  std::string commModel;
  std::string reduceScatterModel, allGatherModel;  // imerge-overlap's halves
  std::string trace;
  std::string profile;  // --profile: the measured compute profile, the slowest rank's
  double distTimeout = 60;
  bool distCheckCollectives = true;
  int64_t warmupSteps = 5;
  bool gracefulStop = true;              // false: SIGINT/SIGTERM end the run at once
  std::vector<std::string> commandLine;  // argv, for the command that resumes a stopped run
};

// Everything a rank needs to know about the job it is part of.
struct Job {
  std::unique_ptr<distributed::Communicator> communicator;  // host collectives (MPI)
  // --dist with --device cuda: the gradients' collectives, bootstrapped over `communicator`.
  std::unique_ptr<distributed::DeviceCommunicator> deviceCommunicator;
  int gpu = 0;  // --device cuda: this rank's GPU (the model must live on cudaDevice(gpu))
  int rank = 0;
  int worldSize = 1;
  bool isMain() const { return rank == 0; }
  // What DataParallel reduces gradients with.
  distributed::Communicator& training() {
    return deviceCommunicator ? *deviceCommunicator : *communicator;
  }
  // Device communicator first: it runs its host part on `communicator`.
  void shutdown() {
    if (deviceCommunicator) deviceCommunicator->shutdown();
    if (communicator) communicator->shutdown();
  }
};

// --dist with --device cuda: a GPU per local rank and NCCL over the MPI communicator, or with
// --dist-backend mpi, MPI through host copies (ranks may then share a GPU). A model on the CPU
// keeps MPI.
void startDeviceCommunicator(const Options& options, Job& job) {
  if (options.device != "cuda") {
    IMERGE_CHECK(options.distBackend != "nccl",
                 "--dist-backend nccl: NCCL all-reduces GPU buffers, but the model trains on the "
                 "CPU; add --device cuda, or use --dist-backend mpi (the default on the CPU)");
    return;
  }
  const bool nccl = options.distBackend != "mpi";
  const std::string backend = options.distBackend == "auto" ? "auto (nccl)" : options.distBackend;
  std::string whyNoGpu;
  const int gpus = cudaDeviceCount(&whyNoGpu);
  job.gpu = distributed::gpuForLocalRank(distributed::localRank(), distributed::localRankCount(),
                                         gpus, nccl, backend, whyNoGpu);
  job.deviceCommunicator =
      nccl ? distributed::makeNcclCommunicator(*job.communicator, job.gpu, options.distTimeout)
           : distributed::makeStagingCommunicator(*job.communicator, job.gpu);
}

// Checks how the process was launched against --dist, before anything else is done. Fills `job`
// as it goes, so that a failure after MPI started can still end every rank.
void startJob(const Options& options, Job& job) {
  const bool underMpirun = distributed::launchedByMpirun();
  if (options.dist.empty()) {
    const char* worldSize = std::getenv("OMPI_COMM_WORLD_SIZE");
    IMERGE_CHECK(!underMpirun || worldSize == nullptr || std::string(worldSize) == "1",
                 "imerge-train was launched by mpirun with ", worldSize ? worldSize : "several",
                 " ranks but without --dist, so every rank would train its own model. Choose a "
                 "strategy: --dist default|wfbp|fusion|priority|mgwfbp|imerge|ddp|imerge-overlap");
    return;
  }
  IMERGE_CHECK(underMpirun, "--dist ", options.dist,
               ": this process was not started by mpirun, so there are no other ranks to "
               "train with. Launch N ranks like this:\n  mpirun -np N imerge-train --dist ",
               options.dist,
               " ...\n(as root add --allow-run-as-root; add --oversubscribe for more ranks "
               "than cores, and --bind-to none so each rank can use several threads). Without "
               "--dist, imerge-train trains in this one process.");
  job.communicator = std::make_unique<distributed::MpiCommunicator>(
      distributed::MpiOptions{.timeoutSeconds = options.distTimeout,
                              .checkCollectiveShapes = options.distCheckCollectives});
  job.rank = job.communicator->rank();
  job.worldSize = job.communicator->size();
  // Stopped by a signal (mpirun's, when another rank died), a rank names itself and the ranks
  // already gone, which mpirun's own notice does not make clear (apps/stop_signals.h).
  apps::prepareRankExitReport(*job.communicator);
  startDeviceCommunicator(options, job);
}

// The configuration every rank must share, for DataParallel's start-up check.
std::string runSignature(const Options& options) {
  return detail::concat(
      "model ", options.model, ", dataset ", options.dataset.name, ", image size ",
      options.dataset.imageSize, ", batch size ", options.batchSize, ", epochs ", options.epochs,
      ", lr ", options.learningRate, ", momentum ", options.momentum, ", weight decay ",
      options.weightDecay, ", nesterov ", options.nesterov, ", schedule ", options.lrSchedule,
      ", warm-up epochs ", options.warmupEpochs, ", seed ", options.seed, ", max steps ",
      options.maxSteps, ", resume '", options.resume, "'");
}

nlohmann::json breakdownRecord(const std::vector<distributed::StepBreakdown>& steps) {
  nlohmann::json perIteration = {
      {"iteration_s", nlohmann::json::array()},     {"compute_s", nlohmann::json::array()},
      {"communication_s", nlohmann::json::array()}, {"overlapped_s", nlohmann::json::array()},
      {"waiting_s", nlohmann::json::array()},       {"bookkeeping_s", nlohmann::json::array()}};
  distributed::StepBreakdown total;
  for (const distributed::StepBreakdown& step : steps) {
    perIteration["iteration_s"].push_back(step.iterationSeconds);
    perIteration["compute_s"].push_back(step.computeSeconds);
    perIteration["communication_s"].push_back(step.communicationSeconds);
    perIteration["overlapped_s"].push_back(step.overlappedSeconds);
    perIteration["waiting_s"].push_back(step.waitingSeconds);
    perIteration["bookkeeping_s"].push_back(step.bookkeepingSeconds);
    total.iterationSeconds += step.iterationSeconds;
    total.computeSeconds += step.computeSeconds;
    total.communicationSeconds += step.communicationSeconds;
    total.overlappedSeconds += step.overlappedSeconds;
    total.waitingSeconds += step.waitingSeconds;
    total.bookkeepingSeconds += step.bookkeepingSeconds;
  }
  const double n = std::max<size_t>(1, steps.size());
  return {{"mean_iteration_s", total.iterationSeconds / n},
          {"mean_compute_s", total.computeSeconds / n},
          {"mean_communication_s", total.communicationSeconds / n},
          {"mean_overlapped_s", total.overlappedSeconds / n},
          {"mean_waiting_s", total.waitingSeconds / n},
          {"mean_bookkeeping_s", total.bookkeepingSeconds / n},
          {"buckets", steps.empty() ? 0 : steps.back().buckets},
          {"per_iteration", std::move(perIteration)}};
}

std::string percent(double fraction) {
  char text[16];
  std::snprintf(text, sizeof text, "%.2f%%", 100 * fraction);
  return text;
}

std::string stepFigures(const training::StepProgress& p) {
  char text[128];
  std::snprintf(text, sizeof text, "loss %.4f  acc %s  %.0f img/s  lr %.4f", p.loss,
                percent(p.accuracy).c_str(), p.imagesPerSecond, p.learningRate);
  return text;
}

// The device this rank trains on: the CPU, or with --device cuda the GPU startJob chose for it
// (GPU 0 without --dist), with the CUDA settings the flags ask for.
Device& trainingDevice(const Options& options, const Job& job) {
  if (options.device == "cpu") return cpuDevice();
  requireCudaDevice();
  cuda::setCudaSettings({.allowTf32 = options.tf32, .deterministic = options.deterministic});
  return cudaDevice(job.gpu);
}

void writeProfile(const Options& options, distributed::ComputeProfile& profile) {
  profile.model = options.model;
  profile.batchPerWorker = options.batchSize;
  distributed::writeComputeProfile(options.profile, profile);
  std::cout << "profile: " << options.profile << " (" << profile.tensors.size()
            << " tensors; forward " << 1e3 * profile.forwardSeconds() << " ms, backward "
            << 1e3 * profile.backwardSeconds() << " ms, optimizer "
            << 1e3 * profile.optimizerSeconds << " ms per iteration)\n";
}

// What a checkpoint records of its run beside the tensors (apps/run_metadata.h).
std::map<std::string, std::string> checkpointMetadata(const Options& options,
                                                      const training::DatasetSplits& splits) {
  using namespace apps::run_keys;
  std::map<std::string, std::string> metadata = {
      {kDataset, options.dataset.name},
      {kDataDir, options.dataset.directory},
      {kImageSize, std::to_string(options.dataset.imageSize)},
      {kClasses, std::to_string(splits.train->classes())},
      {kSmallImages, splits.smallImages ? "1" : "0"},
      {kSeed, std::to_string(options.seed)},
      {kBatchSize, std::to_string(options.batchSize)}};
  if (const auto* folder = dynamic_cast<const data::ImageFolderDataset*>(splits.train.get())) {
    metadata[kClassNames] = apps::joinLines(folder->classNames());
  }
  return metadata;
}

void printTestResult(const training::EpochResult& tested) {
  std::cout << "  test: loss " << tested.loss << ", accuracy " << percent(tested.accuracy) << " on "
            << tested.images << " images\n";
}

// --evaluate-only: the model, dataset, image size, data folder and seed that the checkpoint was
// trained with, for each of those flags not given, so a user never repeats them (a flag given
// wins; a model that disagrees with the checkpoint is then refused by loadCheckpoint).
void takeRunFromCheckpoint(Options& options, const CLI::App& app) {
  using namespace apps::run_keys;
  IMERGE_CHECK(!options.resume.empty(),
               "--evaluate-only needs --resume FILE: the checkpoint to evaluate");
  const io::TrainingState state = io::inspectCheckpoint(options.resume).state;
  const apps::RecordedRun recorded("--resume: " + options.resume, state.metadata);
  // Whether to take `key` from the checkpoint: it holds it and `flag` was not given.
  const auto take = [&](const char* flag, const char* key) {
    return app.count(flag) == 0 && recorded.find(key) != nullptr;
  };
  if (app.count("--model") == 0) options.model = state.modelName;
  if (take("--dataset", kDataset)) options.dataset.name = recorded.text(kDataset);
  if (take("--data-dir", kDataDir)) options.dataset.directory = recorded.text(kDataDir);
  if (take("--image-size", kImageSize)) {
    options.dataset.imageSize = recorded.wholeNumber(kImageSize, 1);
  }
  if (take("--seed", kSeed)) options.seed = static_cast<uint64_t>(recorded.wholeNumber(kSeed));
}

// One image through the model before any training: a model built for other images (small_cnn
// takes 28x28 only) is refused here naming the flags, instead of failing at the first step
// with a layer's shape error. Evaluation mode and no graph, so no state changes and no random
// numbers are drawn.
void checkModelTakesImages(layers::Module& model, const Shape& imageShape, Device& device,
                           const Options& options) {
  Shape one{1};
  one.insert(one.end(), imageShape.begin(), imageShape.end());  // [1, C, H, W]
  const Tensor image = Tensor::zeros(one).to(device);
  autograd::NoGradGuard noGrad;
  model.eval();
  try {
    model.forward(autograd::Variable(image));
  } catch (const Error& error) {
    IMERGE_FAIL("--model ", options.model, " cannot take the images of --dataset ",
                options.dataset.name, " (", shapeToString(imageShape),
                "; try another --image-size or model): ", error.what());
  }
  model.train();
}

// What a checkpoint written in the middle of an epoch records beside the run's metadata.
std::map<std::string, std::string> midEpochMetadata(const training::EpochResult& trained,
                                                    int64_t stepsIntoEpoch) {
  using namespace apps::run_keys;
  char lossSum[32];
  std::snprintf(lossSum, sizeof lossSum, "%.17g", trained.lossSum);
  return {{kStepsIntoEpoch, std::to_string(stepsIntoEpoch)},
          {kEpochLossSum, lossSum},
          {kEpochCorrect, std::to_string(trained.correct)},
          {kEpochImages, std::to_string(trained.images)}};
}

// Where a resumed run's first epoch starts: after the step a mid-epoch checkpoint stopped at
// (its figures on the main rank only, as the epoch's figures are summed over the ranks), or at
// its beginning.
training::EpochStart resumePosition(const Options& options, const io::TrainingState& state,
                                    int64_t stepsPerEpoch, bool carriesFigures) {
  using namespace apps::run_keys;
  const apps::RecordedRun recorded("--resume: " + options.resume, state.metadata);
  if (!recorded.find(kStepsIntoEpoch)) return {};
  training::EpochStart start{.step = recorded.wholeNumber(kStepsIntoEpoch)};
  IMERGE_CHECK(start.step <= stepsPerEpoch, "--resume: ", options.resume, " stopped after step ",
               start.step, " of epoch ", state.epoch + 1, ", but this run's epochs have ",
               stepsPerEpoch,
               " steps: give the --batch-size, --max-steps and data of the run "
               "that saved it");
  if (carriesFigures) {
    start.lossSum = recorded.number(kEpochLossSum);
    start.correct = recorded.wholeNumber(kEpochCorrect);
    start.images = recorded.wholeNumber(kEpochImages);
  }
  return start;
}

// The shell words of `word`, quoted when the shell would split or expand it.
std::string shellWord(const std::string& word) {
  const bool plain = !word.empty() && word.find_first_not_of(
                                          "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                          "0123456789_-+=/.,:@%") == std::string::npos;
  if (plain) return word;
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// The command line that continues a stopped run: this one, with --resume CHECKPOINT instead of
// any --resume it had.
std::string resumeCommand(const Options& options, const std::string& checkpoint, int worldSize) {
  std::string command = worldSize > 1 ? "mpirun -np " + std::to_string(worldSize) + " ... " : "";
  const std::vector<std::string>& words = options.commandLine;
  for (size_t i = 0; i < words.size(); ++i) {
    if (words[i] == "--resume") {
      ++i;  // and its value
      continue;
    }
    if (words[i].rfind("--resume=", 0) == 0) continue;
    command += (i == 0 ? "" : " ") + shellWord(words[i]);
  }
  return command + " --resume " + shellWord(checkpoint);
}

// Every rank's default generator (dropout's draws), for a checkpoint: "default" is rank 0's,
// "rank<r>" rank r's, so that a resumed run continues every rank's stream where it stopped.
// A collective when there are several ranks: every rank calls it before the main one saves.
std::map<std::string, std::string> generatorStates(const Job& job) {
  const std::string mine = defaultGenerator().state();
  if (!job.communicator || job.worldSize == 1) return {{"default", mine}};
  const std::vector<std::string> all = job.communicator->allgatherText(mine);
  std::map<std::string, std::string> states = {{"default", all[0]}};
  for (size_t rank = 1; rank < all.size(); ++rank)
    states["rank" + std::to_string(rank)] = all[rank];
  return states;
}

// A run that every rank agreed to stop after a step (a signal, apps/stop_signals.h): the main
// rank saves where it stands, when --checkpoint-dir is set, and says how to go on. The exit
// status is the shell's for the signal, 128 + its number.
int stopMidEpoch(const Options& options, const Job& job, const layers::Module& model,
                 optim::Sgd& optimizer, const std::map<std::string, std::string>& runMetadata,
                 const training::EpochResult& trained, int64_t epoch, int64_t stepsIntoEpoch,
                 int64_t stepsPerEpoch, int64_t globalStep) {
  const int signal = trained.stoppedBy;
  std::map<std::string, std::string> rngStates;
  if (!options.checkpointDir.empty()) rngStates = generatorStates(job);
  if (!job.isMain()) return 128 + signal;
  std::string text = "imerge-train: stopped by " + apps::signalName(signal) + " after step " +
                     std::to_string(stepsIntoEpoch) + "/" + std::to_string(stepsPerEpoch) +
                     " of epoch " + std::to_string(epoch + 1) + "/" +
                     std::to_string(options.epochs) +
                     (job.worldSize > 1 ? ", every rank with it" : "") + "\n";
  if (options.checkpointDir.empty()) {
    text += "  nothing saved: without --checkpoint-dir there is no checkpoint to resume from\n";
  } else {
    const std::string path = options.checkpointDir + "/last.ckpt";
    std::map<std::string, std::string> metadata = runMetadata;
    metadata.merge(midEpochMetadata(trained, stepsIntoEpoch));
    io::saveCheckpoint(path, model, &optimizer,
                       {.modelName = options.model,
                        .epoch = epoch,
                        .step = globalStep,
                        .rngStates = std::move(rngStates),
                        .metadata = std::move(metadata)});
    text += "  checkpoint: " + path +
            "\n  to continue: " + resumeCommand(options, path, job.worldSize) + "\n";
  }
  std::cout.flush();
  std::cerr << text << std::flush;
  return 128 + signal;
}

int run(const Options& options, Job& job) {
  Device& device = trainingDevice(options, job);
  // Ranks on one machine share its cores; spin-waiting OpenMP pools must not overlap.
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  setNumThreads(options.threads > 0
                    ? options.threads
                    : std::max(1, cores / (job.communicator ? distributed::localRankCount() : 1)));
  manualSeed(options.seed);  // dropout and initialisation draw from the default generator

  training::DatasetChoice datasetChoice = options.dataset;
  datasetChoice.seed = options.seed;
  training::DatasetSplits splits = training::openDatasets(datasetChoice);
  std::cout << "data: " << splits.train->describe() << "\n      " << splits.test->describe()
            << "\n";

  const Shape imageShape = splits.train->imageShape();
  auto model = models::buildModel(options.model,
                                  {.inChannels = imageShape[0],
                                   .classes = splits.train->classes(),
                                   .smallImages = splits.smallImages},
                                  defaultGenerator());
  // Initialised on the host, whatever the device, so a seed gives the same weights everywhere.
  model->to(device);
  checkModelTakesImages(*model, imageShape, device, options);
  std::cout << "model: " << options.model << ", " << model->parameterCount() << " parameters, "
            << (device.type() == DeviceType::CPU ? std::to_string(numThreads()) + " threads"
                                                 : "on " + device.name())
            << "\n";

  optim::Sgd optimizer(model->parameters(), {.learningRate = options.learningRate,
                                             .momentum = options.momentum,
                                             .weightDecay = options.weightDecay,
                                             .nesterov = options.nesterov});
  optim::LrSchedule schedule({.kind = optim::LrSchedule::parseKind(options.lrSchedule),
                              .baseLr = options.learningRate,
                              .warmupEpochs = options.warmupEpochs,
                              .stepEpochs = std::max<double>(1, options.epochs / 3.0),
                              .totalEpochs = static_cast<double>(options.epochs)});

  data::DataLoader trainLoader(splits.train, {.batchSize = options.batchSize,
                                              .shuffle = true,
                                              .workers = options.workers,
                                              .seed = options.seed,
                                              .rank = job.rank,
                                              .worldSize = job.worldSize});
  data::DataLoader testLoader(splits.test, {.batchSize = 256,
                                            .shuffle = false,
                                            .workers = options.workers,
                                            .seed = options.seed,
                                            .rank = job.rank,
                                            .worldSize = job.worldSize});

  if (job.communicator && job.worldSize > 1) {
    // Before any step: ranks whose data differ would post different collectives.
    training::requireSameDatasetOnEveryRank(*job.communicator,
                                            {.trainImages = splits.train->size(),
                                             .testImages = splits.test->size(),
                                             .stepsPerEpoch = trainLoader.batchesPerEpoch(),
                                             .evaluationSteps = testLoader.batchesPerEpoch(),
                                             .classes = splits.train->classes(),
                                             .imageShape = imageShape,
                                             .source = splits.source});
  }

  const int64_t stepsPerEpoch = options.maxSteps > 0
                                    ? std::min(options.maxSteps, trainLoader.batchesPerEpoch())
                                    : trainLoader.batchesPerEpoch();
  int64_t firstEpoch = 0;
  int64_t globalStep = 0;
  training::EpochStart resumedAt;                   // where the first epoch starts
  std::optional<std::string> resumedRankGenerator;  // this rank's, when the checkpoint has it
  if (!options.resume.empty()) {
    // Evaluation needs no optimizer, so its settings need not match the checkpoint's.
    io::TrainingState state = io::loadCheckpoint(options.resume, options.model, *model,
                                                 options.evaluateOnly ? nullptr : &optimizer);
    firstEpoch = state.epoch;
    globalStep = state.step;
    defaultGenerator().setState(state.rngStates.at("default"));
    if (const auto rankState = state.rngStates.find("rank" + std::to_string(job.rank));
        job.rank > 0 && rankState != state.rngStates.end()) {
      resumedRankGenerator = rankState->second;
    }
    if (!options.evaluateOnly) {
      resumedAt = resumePosition(options, state, stepsPerEpoch, job.isMain());
    }
    if (resumedAt.step > 0) {
      std::cout << "resumed from " << options.resume << " in epoch " << firstEpoch + 1
                << " after step " << resumedAt.step << "/" << stepsPerEpoch << "\n";
    } else {
      std::cout << "resumed from " << options.resume << " after epoch " << firstEpoch << "\n";
    }
    IMERGE_CHECK(options.evaluateOnly || firstEpoch < options.epochs, "--resume: ", options.resume,
                 " already holds ", firstEpoch, " epochs; ask for more with --epochs (now ",
                 options.epochs, "), or evaluate it with --evaluate-only");
  }
  // Dropout draws differ between ranks, as they would on separate machines. A checkpoint from a
  // run with this rank continues its stream; one from fewer ranks starts a new one.
  if (resumedRankGenerator) {
    defaultGenerator().setState(*resumedRankGenerator);
  } else if (job.rank > 0) {
    defaultGenerator().seed(options.seed * 1000003 + job.rank * 7919 + firstEpoch);
  }

  std::unique_ptr<distributed::Trace> trace;
  std::unique_ptr<distributed::DataParallel> parallel;
  // --profile without --dist: a world of one, so that DataParallel's hooks time each gradient.
  if (!job.communicator && !options.profile.empty()) {
    job.communicator = std::make_unique<distributed::SingleProcessCommunicator>();
  }
  if (job.communicator) {
    if (!options.trace.empty()) trace = std::make_unique<distributed::Trace>(job.rank);
    distributed::DataParallelOptions parallelOptions{
        .strategy = options.dist.empty() ? "wfbp" : options.dist,
        .planner = options.planner,
        .commSamples = samplesFrom("--comm-model", options.commModel, job.worldSize),
        .reduceScatterSamples =
            samplesFrom("--reduce-scatter-model", options.reduceScatterModel, job.worldSize),
        .allGatherSamples =
            samplesFrom("--all-gather-model", options.allGatherModel, job.worldSize),
        .warmupSteps = options.warmupSteps,
        .trace = trace.get(),
        .runSignature = runSignature(options)};
    parallel = std::make_unique<distributed::DataParallel>(model, job.training(),
                                                           std::move(parallelOptions));
    std::cout << "dist: " << parallel->strategy() << " on " << job.worldSize << " rank(s) ("
              << job.training().backendName() << "), "
              << "communication model"
              << (!parallel->plansWithCommModel() ? ""
                  : options.commModel.empty()     ? " (measured at start-up)"
                                                  : " (from " + options.commModel + ")")
              << ": " << parallel->beliefModel()->describe() << "\n";
  }
  if (!options.checkpointDir.empty()) {
    std::filesystem::create_directories(options.checkpointDir);
    // Only the main rank saves, so only it may find its own earlier run's leftovers.
    if (job.isMain()) {
      for (const io::StaleTemporary& stale :
           io::removeStaleCheckpointTemporaries(options.checkpointDir)) {
        std::cout << "checkpoint: removed " << stale.path << ", left by process " << stale.pid
                  << " (no longer running) when its save was cut short\n";
      }
    }
  }

  if (options.evaluateOnly) {
    printTestResult(training::evaluate(*model, testLoader, parallel.get()));
    return 0;
  }

  training::MetricsLog log(job.isMain() ? options.logJson : std::string(),
                           {{"model", options.model},
                            {"dataset", options.dataset.name},
                            {"batch_size", options.batchSize},
                            {"epochs", options.epochs},
                            {"lr", options.learningRate},
                            {"momentum", options.momentum},
                            {"weight_decay", options.weightDecay},
                            {"lr_schedule", options.lrSchedule},
                            {"threads", numThreads()},
                            {"device", device.name()},
                            {"seed", options.seed},
                            {"dist", options.dist.empty() ? "none" : options.dist},
                            {"workers", job.worldSize}});
  if (firstEpoch > 0) log.keepEpochsBefore(firstEpoch);

  const std::map<std::string, std::string> runMetadata = checkpointMetadata(options, splits);
  const int64_t lastEpoch = options.stopAfterEpochs > 0
                                ? std::min(options.epochs, firstEpoch + options.stopAfterEpochs)
                                : options.epochs;
  // From here the first SIGINT or SIGTERM stops the run after its step, on every rank.
  std::optional<apps::GracefulStopWindow> gracefulStop;
  std::optional<distributed::StopAgreement> stopAgreement;
  if (options.gracefulStop) {
    gracefulStop.emplace(job.communicator && job.worldSize > 1
                             ? "rank " + std::to_string(job.rank) + " of " +
                                   std::to_string(job.worldSize)
                             : "");
    stopAgreement.emplace(job.communicator.get(), apps::stopRequestedBy);
  }
  for (int64_t epoch = firstEpoch; epoch < lastEpoch; ++epoch) {
    const std::string label =
        "epoch " + std::to_string(epoch + 1) + "/" + std::to_string(options.epochs);
    const training::EpochStart start = epoch == firstEpoch ? resumedAt : training::EpochStart{};
    training::ProgressBar bar(label, std::max<int64_t>(1, stepsPerEpoch), options.logEvery, stdout,
                              start.step);
    std::string lastFigures;
    training::EpochResult trained = training::trainEpoch(
        *model, optimizer, schedule, trainLoader, epoch,
        {.maxSteps = options.maxSteps,
         .start = start,
         .onProgress =
             [&](const training::StepProgress& p) {
               lastFigures = stepFigures(p);
               bar.update(p.step, lastFigures);
             },
         .stopAfterStep = [&] { return stopAgreement ? stopAgreement->afterStep() : 0; },
         .parallel = parallel.get()});
    bar.finish(lastFigures);
    globalStep += trained.steps;
    if (trained.stoppedBy != 0) {
      const int64_t stepsIntoEpoch = (epoch == firstEpoch ? resumedAt.step : 0) + trained.steps;
      return stopMidEpoch(options, job, *model, optimizer, runMetadata, trained, epoch,
                          stepsIntoEpoch, stepsPerEpoch, globalStep);
    }

    nlohmann::json record = {{"epoch", epoch + 1},
                             {"train_loss", trained.loss},
                             {"train_accuracy", trained.accuracy},
                             {"images_per_second", trained.imagesPerSecond},
                             {"seconds", trained.seconds},
                             {"data_wait_seconds", trained.dataWaitSeconds},
                             {"steps", globalStep}};
    if (parallel) {
      record["distributed"] = breakdownRecord(trained.breakdowns);
      const auto& d = record["distributed"];
      char figures[256];
      std::snprintf(
          figures, sizeof figures,
          "  dist: %zu buckets; per iteration %.1f ms: compute %.1f ms, communication "
          "%.1f ms (%.1f ms overlapped), waiting %.1f ms\n",
          d["buckets"].get<size_t>(), 1e3 * d["mean_iteration_s"].get<double>(),
          1e3 * d["mean_compute_s"].get<double>(), 1e3 * d["mean_communication_s"].get<double>(),
          1e3 * d["mean_overlapped_s"].get<double>(), 1e3 * d["mean_waiting_s"].get<double>());
      std::cout << figures;
      if (trace) trace->write(distributed::traceFileForRank(options.trace, job.rank));
    }
    if (epoch + 1 == lastEpoch || (epoch + 1) % options.evalEvery == 0) {
      training::EpochResult tested = training::evaluate(*model, testLoader, parallel.get());
      record["test_loss"] = tested.loss;
      record["test_accuracy"] = tested.accuracy;
      printTestResult(tested);
    }
    log.addEpoch(record);

    std::map<std::string, std::string> rngStates;
    if (!options.checkpointDir.empty()) rngStates = generatorStates(job);
    if (!options.checkpointDir.empty() && job.isMain()) {
      const std::string path = options.checkpointDir + "/last.ckpt";
      io::saveCheckpoint(path, *model, &optimizer,
                         {.modelName = options.model,
                          .epoch = epoch + 1,
                          .step = globalStep,
                          .rngStates = std::move(rngStates),
                          .metadata = runMetadata});
      std::cout << "  checkpoint: " << path << "\n";
    }
    std::cout.flush();
  }
  if (apps::stopRequestedBy() != 0 && job.isMain()) {
    std::cerr << "imerge-train: " << apps::signalName(apps::stopRequestedBy())
              << " arrived after the last step; the run finished\n";
  }
  if (parallel) {
    parallel->synchronize();
    if (trace) trace->write(distributed::traceFileForRank(options.trace, job.rank));
    if (!options.profile.empty()) {
      // Every rank takes part (the profile is the slowest rank's); the main one writes it.
      distributed::ComputeProfile profile = parallel->computeProfile();
      if (job.isMain()) writeProfile(options, profile);
    }
  }
  return 0;
}

// "imerge-train: error on rank R of N: what" as one write, so that ranks failing together do not
// interleave their messages on a shared standard error.
void reportError(const Job& job, const std::exception& error) {
  std::string text = "imerge-train: error";
  if (job.communicator) {
    text += " on rank " + std::to_string(job.rank) + " of " + std::to_string(job.worldSize);
  }
  text += std::string(": ") + error.what() + "\n";
  std::fwrite(text.data(), 1, text.size(), stderr);
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  options.commandLine.assign(argv, argv + argc);
  CLI::App app{"imerge-train: train an image classifier"};
  app.add_option("--model", options.model, "model name (resnet20, resnet18, vgg16_bn, alexnet...)")
      ->capture_default_str();
  app.add_option("--dataset", options.dataset.name, training::datasetNames())
      ->capture_default_str();
  app.add_option("--data-dir", options.dataset.directory,
                 "dataset folder (default for fashion-mnist: /usr/share/datasets/fashion-mnist)");
  app.add_option("--image-size", options.dataset.imageSize,
                 "side of the images for imagenet-folder and synthetic")
      ->check(apps::wholeNumber(16, 4096))
      ->capture_default_str();
  app.add_option("--max-image-pixels", options.dataset.maxImagePixels,
                 "imagenet-folder: skip (or, with --strict-data, refuse) images whose header "
                 "declares more pixels (0: (32 x --image-size)^2, 51 megapixels at 224)")
      ->check(apps::wholeNumber(0, int64_t{1} << 30))
      ->capture_default_str();
  app.add_flag("--strict-data", options.dataset.strict,
               "a corrupt image is an error instead of a warning and a skip");
  app.add_option("--batch-size", options.batchSize, "images per step")
      ->check(apps::wholeNumber(1, 1 << 20))
      ->capture_default_str();
  app.add_option("--epochs", options.epochs, "passes over the training set")
      ->check(apps::wholeNumber(1))
      ->capture_default_str();
  app.add_option("--lr", options.learningRate, "base learning rate")
      ->check(apps::finiteNumber(0))
      ->capture_default_str();
  app.add_option("--momentum", options.momentum, "SGD momentum")
      ->check(apps::finiteNumber(0, 1))
      ->capture_default_str();
  app.add_flag("--nesterov", options.nesterov, "Nesterov momentum");
  app.add_option("--weight-decay", options.weightDecay, "L2 weight decay")
      ->check(apps::finiteNumber(0))
      ->capture_default_str();
  app.add_option("--lr-schedule", options.lrSchedule, "learning-rate schedule")
      ->check(CLI::IsMember({"constant", "step", "cosine"}))
      ->capture_default_str();
  app.add_option("--warmup-epochs", options.warmupEpochs, "linear warm-up length in epochs")
      ->check(apps::finiteNumber(0))
      ->capture_default_str();
  app.add_option("--threads", options.threads, "CPU threads (0: all cores)")
      ->check(apps::threadCount())
      ->capture_default_str();
  app.add_option("--workers", options.workers, "data-loading threads")
      ->check(apps::wholeNumber(0, 256))
      ->capture_default_str();
  app.add_option("--seed", options.seed, "random seed")->capture_default_str();
  app.add_option("--device", options.device, "cpu or cuda (one GPU per local rank under mpirun)")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  app.add_flag("--deterministic", options.deterministic,
               "CUDA: only cuDNN algorithms that give bit-identical results run to run (CPU "
               "training repeats bit for bit at a given thread count already)");
  app.add_flag("!--no-tf32", options.tf32,
               "CUDA: full float32 convolutions instead of TF32 (PyTorch's default is TF32)");
  app.add_option("--checkpoint-dir", options.checkpointDir,
                 "write <dir>/last.ckpt after every epoch");
  app.add_option("--resume", options.resume, "continue from this checkpoint")
      ->check(CLI::ExistingFile);
  app.add_flag("--evaluate-only", options.evaluateOnly,
               "evaluate the --resume checkpoint on the test split and exit (model, dataset, data "
               "folder, image size and seed from the checkpoint unless given)");
  app.add_option("--eval-every", options.evalEvery, "evaluate every this many epochs (and last)")
      ->check(apps::wholeNumber(1))
      ->capture_default_str();
  app.add_option("--log-json", options.logJson, "write per-epoch metrics to this JSON file");
  app.add_option("--max-steps", options.maxSteps, "stop each epoch after this many steps (0: all)")
      ->check(apps::wholeNumber(0))
      ->capture_default_str();
  app.add_option("--stop-after-epochs", options.stopAfterEpochs,
                 "stop after this many epochs of the schedule (resume later with --resume)")
      ->check(apps::wholeNumber(0));
  app.add_option("--log-every", options.logEvery,
                 "print a progress line every this many steps when not on a terminal")
      ->check(apps::wholeNumber(1))
      ->capture_default_str();
  app.add_option("--dist", options.dist,
                 "data-parallel strategy under mpirun: default, wfbp, fusion, priority, mgwfbp, "
                 "imerge, ddp, imerge-overlap")
      ->check(CLI::IsMember(distributed::strategyNames()));
  apps::addPlannerFlags(app, options.planner);
  app.add_option("--comm-model", options.commModel,
                 "CSV of measured all-reduce times (bytes,seconds; imerge-commbench) to plan "
                 "with, instead of a start-up measurement")
      ->check(CLI::ExistingFile);
  app.add_option("--reduce-scatter-model", options.reduceScatterModel,
                 "--dist imerge-overlap: CSV of measured reduce-scatter times of whole messages "
                 "(imerge-commbench --collective reduce-scatter) instead of a start-up "
                 "measurement")
      ->check(CLI::ExistingFile);
  app.add_option("--all-gather-model", options.allGatherModel,
                 "--dist imerge-overlap: likewise for all-gathers (--collective all-gather)")
      ->check(CLI::ExistingFile);
  app.add_option("--trace", options.trace,
                 "write a Chrome-trace JSON per rank (FILE.rankN.json) of forward, backward, "
                 "all-reduces and the optimizer");
  app.add_option("--profile", options.profile,
                 "write the compute profile (per-tensor backward times, forward and optimizer; "
                 "with --dist as the slowest rank ran them: the latest ready time over ranks) "
                 "to this .json or .csv file at the end, for imerge-scale; without "
                 "--dist the steps go through a one-process DataParallel (wfbp) to time them");
  app.add_option("--dist-backend", options.distBackend,
                 "how --dist moves gradients: auto (NCCL for --device cuda, MPI on the CPU), "
                 "nccl (a GPU per rank), mpi (on a GPU: MPI through host copies, ranks may share "
                 "a GPU)")
      ->check(CLI::IsMember({"auto", "nccl", "mpi"}))
      ->capture_default_str();
  app.add_option("--dist-check-collectives", options.distCheckCollectives,
                 "with --dist: compare every collective's size across ranks before posting it, "
                 "so ranks that disagree fail with a named error instead of corrupting memory "
                 "(one small all-gather per collective; bench/collective_check_cost.sh)")
      ->capture_default_str();
  app.add_option("--graceful-stop", options.gracefulStop,
                 "the first SIGINT or SIGTERM (and SIGUSR1, which mpirun forwards to every "
                 "rank) stops training after its step, with a checkpoint and the command that "
                 "resumes it; a second one stops at once. false: they stop it at once")
      ->capture_default_str();
  app.add_option("--dist-timeout", options.distTimeout,
                 "seconds a collective may wait for the other ranks before the job stops")
      ->check(apps::finiteNumber(0))
      ->capture_default_str();
  app.add_option("--warmup-steps", options.warmupSteps,
                 "steps profiled before the plan is rebuilt from measured backward times")
      ->check(apps::wholeNumber(1))
      ->capture_default_str();
  IMERGE_PARSE_FLAGS(app, argc, argv);
  apps::installStopSignals(options.gracefulStop);
  Job job;
  try {
    if (options.evaluateOnly) takeRunFromCheckpoint(options, app);
    startJob(options, job);
    // Only rank 0 talks: the other ranks' standard output (the progress bar's too) is
    // discarded; their errors still reach standard error.
    if (!job.isMain())
      IMERGE_CHECK(std::freopen("/dev/null", "w", stdout), "cannot silence rank ", job.rank);
    const int status = run(options, job);
    job.shutdown();
    return status;
  } catch (const distributed::RanksDisagree& error) {
    // Every rank refused at the same point: none waits in a collective, so all end in order.
    reportError(job, error);
    job.shutdown();
    return 1;
  } catch (const std::exception& error) {
    reportError(job, error);
    // The other ranks would wait in their next collective: end the whole job now.
    if (job.communicator && job.worldSize > 1) job.communicator->abort(1);
    return 1;
  }
}
