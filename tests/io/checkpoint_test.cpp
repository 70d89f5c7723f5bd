// Checkpoints: exact round trips, exact resume of SGD training, refusals of foreign or damaged
// files (leaving the model untouched) and failed writes (leaving the old checkpoint intact).
#include "io/checkpoint.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include "layers/layers.h"
#include "support/error_text.h"
#include "support/fake_device.h"
#include "support/file_bytes.h"

namespace imerge::io {

using namespace imerge::layers;  // the model under test
using namespace imerge::optim;
using autograd::Variable;
namespace {

namespace fs = std::filesystem;
using testing::errorMessage;
using testing::expectContains;
using testing::readFileBytes;
using testing::writeFileBytes;

constexpr const char* kModelName = "tinynet";

struct RunConfig {
  uint64_t initSeed = 1;
  uint64_t dataSeed = 7;
  uint64_t dropoutSeed = 11;
  int64_t channels = 4;
  bool linearBias = true;
  SgdOptions sgd{.learningRate = 0.05f, .momentum = 0.9f, .weightDecay = 1e-4f};
};

// A small model with every kind of state (conv, batch-norm buffers, dropout randomness,
// linear), its SGD and the generators that feed it. Not movable: Dropout keeps a pointer to
// `dropout`.
class TrainingRun {
 public:
  explicit TrainingRun(const RunConfig& config = {})
      : data(config.dataSeed), dropout(config.dropoutSeed) {
    Generator init(config.initSeed);
    model = std::make_shared<Sequential>();
    model->add(std::make_shared<Conv2d>(2, config.channels, 3, 1, 1, true, init));
    model->add(std::make_shared<BatchNorm2d>(config.channels));
    model->add(std::make_shared<ReLU>());
    model->add(std::make_shared<Dropout>(0.25f, dropout));
    model->add(std::make_shared<Flatten>());
    model->add(std::make_shared<Linear>(config.channels * 4 * 4, 3, config.linearBias, init));
    optimizer = std::make_unique<Sgd>(model->parameters(), config.sgd);
  }
  TrainingRun(const TrainingRun&) = delete;
  TrainingRun& operator=(const TrainingRun&) = delete;

  // One SGD step on a fresh random batch of 4 images 2x4x4 and 3 classes.
  void step() {
    Tensor input = Tensor::empty({4, 2, 4, 4});
    data.fillNormal(input, 0.0f, 1.0f);
    std::vector<int64_t> labels(4);
    for (auto& label : labels) label = static_cast<int64_t>(data.nextInt(3));
    optimizer->zeroGrad();
    Variable loss = autograd::softmaxCrossEntropy(model->forward(Variable(input)),
                                                  Tensor::fromVector(labels, {4}));
    loss.backward();
    optimizer->step();
    ++steps;
  }

  TrainingState state() const {
    TrainingState saved;
    saved.modelName = kModelName;
    saved.epoch = steps / 2;
    saved.step = steps;
    saved.rngStates = {{"data", data.state()}, {"dropout", dropout.state()}};
    saved.metadata = {{"data_seed", "7"}};
    return saved;
  }

  void restore(const TrainingState& saved) {
    steps = saved.step;
    data.setState(saved.rngStates.at("data"));
    dropout.setState(saved.rngStates.at("dropout"));
  }

  Generator data;
  Generator dropout;
  std::shared_ptr<Sequential> model;
  std::unique_ptr<Sgd> optimizer;
  int64_t steps = 0;
};

std::vector<uint8_t> bytesOf(const Tensor& tensor) {
  if (!tensor.defined()) return {};
  const auto* data = static_cast<const uint8_t*>(tensor.rawData());
  return std::vector<uint8_t>(data, data + tensor.bytes());
}

// Every byte of model and optimizer state, by name, for bitwise comparisons.
std::map<std::string, std::vector<uint8_t>> snapshot(TrainingRun& run) {
  std::map<std::string, std::vector<uint8_t>> state;
  const auto parameters = run.model->namedParameters();
  for (const auto& [name, parameter] : parameters)
    state["parameter " + name] = bytesOf(parameter.tensor());
  for (const auto& [name, buffer] : run.model->namedBuffers())
    state["buffer " + name] = bytesOf(buffer);
  const auto& momentum = run.optimizer->momentumBuffers();
  for (size_t i = 0; i < momentum.size(); ++i) {
    state["momentum " + parameters[i].first] =
        momentum[i].defined() ? bytesOf(momentum[i]) : std::vector<uint8_t>{0xAB};
  }
  return state;
}

std::set<std::string> filesIn(const fs::path& directory) {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(directory)) {
    names.insert(entry.path().filename().string());
  }
  return names;
}

class Checkpoint : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    directory_ = fs::temp_directory_path() /
                 ("imerge-checkpoint-" + std::to_string(::getpid()) + "-" + test->name());
    fs::remove_all(directory_);
    fs::create_directories(directory_);
  }
  void TearDown() override { fs::remove_all(directory_); }

  fs::path path(const std::string& name = "ck.bin") const { return directory_ / name; }

  // A checkpoint of a run after two steps, and the run itself.
  std::string saveAfterTwoSteps(TrainingRun& run) {
    run.step();
    run.step();
    saveCheckpoint(path(), *run.model, run.optimizer.get(), run.state());
    return path().string();
  }

  fs::path directory_;
};

TEST_F(Checkpoint, RoundTripRestoresEveryTensorCounterAndRandomState) {
  TrainingRun saved;
  saved.step();
  saved.step();
  // A parameter that never took a step has no momentum buffer; that must survive too.
  saved.optimizer->momentumBuffers()[1] = Tensor();
  saveCheckpoint(path(), *saved.model, saved.optimizer.get(), saved.state());
  EXPECT_EQ(filesIn(directory_), std::set<std::string>{"ck.bin"}) << "a temporary file was left";

  TrainingRun restored({.initSeed = 5,
                        .dataSeed = 8,
                        .dropoutSeed = 9,
                        .sgd = {.learningRate = 0.7f, .momentum = 0.9f, .weightDecay = 1e-4f}});
  restored.step();  // every momentum buffer defined, so the absent one must be cleared
  ASSERT_NE(snapshot(restored), snapshot(saved));
  const TrainingState state =
      loadCheckpoint(path().string(), kModelName, *restored.model, restored.optimizer.get());
  EXPECT_EQ(snapshot(restored), snapshot(saved));
  EXPECT_FALSE(restored.optimizer->momentumBuffers()[1].defined());
  EXPECT_EQ(restored.optimizer->learningRate(), 0.05f);
  EXPECT_EQ(state.modelName, kModelName);
  EXPECT_EQ(state.epoch, 1);
  EXPECT_EQ(state.step, 2);
  EXPECT_EQ(state.rngStates, saved.state().rngStates);
  EXPECT_EQ(state.metadata, saved.state().metadata);

  const CheckpointSummary summary = inspectCheckpoint(path().string());
  EXPECT_EQ(summary.formatVersion, kCheckpointFormatVersion);
  ASSERT_EQ(summary.parameters.size(), 6u);
  EXPECT_EQ(summary.parameters[0].name, "0.weight");
  EXPECT_EQ(summary.parameters[0].shape, (Shape{4, 2, 3, 3}));
  ASSERT_EQ(summary.buffers.size(), 3u);
  EXPECT_EQ(summary.buffers[2].name, "1.num_batches_tracked");
  EXPECT_EQ(summary.buffers[2].dtype, DType::Int64);
  EXPECT_TRUE(summary.hasOptimizer);
  EXPECT_EQ(summary.sgdOptions.momentum, 0.9f);
  EXPECT_EQ(summary.momentumParameters,
            (std::vector<std::string>{"0.weight", "1.weight", "1.bias", "5.weight", "5.bias"}));
}

TEST_F(Checkpoint, ResumedTrainingEqualsUninterruptedTrainingBitForBit) {
  TrainingRun uninterrupted;
  for (int i = 0; i < 4; ++i) uninterrupted.step();

  {
    TrainingRun firstHalf;
    firstHalf.step();
    firstHalf.step();
    saveCheckpoint(path(), *firstHalf.model, firstHalf.optimizer.get(), firstHalf.state());
  }
  // Everything a fresh process would get differently: weights, generators, learning rate.
  TrainingRun resumed({.initSeed = 42,
                       .dataSeed = 43,
                       .dropoutSeed = 44,
                       .sgd = {.learningRate = 0.3f, .momentum = 0.9f, .weightDecay = 1e-4f}});
  resumed.restore(
      loadCheckpoint(path().string(), kModelName, *resumed.model, resumed.optimizer.get()));
  resumed.step();
  resumed.step();

  EXPECT_EQ(resumed.steps, 4);
  const auto expected = snapshot(uninterrupted);
  const auto actual = snapshot(resumed);
  ASSERT_EQ(actual.size(), expected.size());
  for (const auto& [name, bytes] : expected) {
    EXPECT_TRUE(actual.at(name) == bytes) << name << " differs after resuming";
  }
  EXPECT_EQ(resumed.data.state(), uninterrupted.data.state());
  EXPECT_EQ(resumed.dropout.state(), uninterrupted.dropout.state());
}

TEST_F(Checkpoint, LoadsWithoutAnOptimizerAndSavesWithoutOne) {
  TrainingRun saved;
  saved.step();
  saveCheckpoint(path(), *saved.model, nullptr, saved.state());
  TrainingRun evaluation({.initSeed = 3});
  loadCheckpoint(path().string(), kModelName, *evaluation.model, nullptr);
  EXPECT_EQ(bytesOf(evaluation.model->namedParameters()[0].second.tensor()),
            bytesOf(saved.model->namedParameters()[0].second.tensor()));
  EXPECT_FALSE(inspectCheckpoint(path().string()).hasOptimizer);

  // Resuming training from it would silently drop the momentum: refused.
  const std::string message = errorMessage([&] {
    loadCheckpoint(path().string(), kModelName, *evaluation.model, evaluation.optimizer.get());
  });
  expectContains(message, "the checkpoint holds no optimizer state");
}

// A model on a device (host memory behind DeviceType::CUDA, so no GPU is needed) loads a
// checkpoint written on the CPU into its device tensors, keeps its momentum on that device, and
// saves the same bytes back.
TEST_F(Checkpoint, DeviceTensorsLoadAndSaveThroughTheHost) {
  static auto* device = new imerge::testing::HostBackedDevice(DeviceType::CUDA, "fake-cuda:0");
  TrainingRun saved;
  saveAfterTwoSteps(saved);

  TrainingRun onDevice({.initSeed = 5});
  onDevice.model->to(*device);
  onDevice.optimizer = std::make_unique<Sgd>(onDevice.model->parameters(), RunConfig{}.sgd);
  loadCheckpoint(path().string(), kModelName, *onDevice.model, onDevice.optimizer.get());

  const auto expected = saved.model->namedParameters();
  const auto actual = onDevice.model->namedParameters();
  for (size_t i = 0; i < actual.size(); ++i) {
    EXPECT_EQ(&actual[i].second.tensor().device(), device) << actual[i].first;
    EXPECT_EQ(actual[i].second.tensor().toVector(), expected[i].second.tensor().toVector())
        << actual[i].first;
    const Tensor& momentum = onDevice.optimizer->momentumBuffers()[i];
    ASSERT_TRUE(momentum.defined()) << actual[i].first;
    EXPECT_EQ(&momentum.device(), device) << actual[i].first;
    EXPECT_EQ(momentum.toVector(), saved.optimizer->momentumBuffers()[i].toVector())
        << actual[i].first;
  }
  for (auto& [name, buffer] : onDevice.model->namedBuffers()) {
    if (buffer.dtype() == DType::Float32) {
      EXPECT_EQ(&buffer.device(), device) << name;
    }
  }

  saveCheckpoint(path("again.bin"), *onDevice.model, onDevice.optimizer.get(), saved.state());
  EXPECT_TRUE(readFileBytes(path("again.bin")) == readFileBytes(path()))
      << "the device's save differs";
}

TEST_F(Checkpoint, RefusesACheckpointOfAnotherModelName) {
  TrainingRun saved;
  const std::string file = saveAfterTwoSteps(saved);
  TrainingRun target({.initSeed = 9});
  const auto before = snapshot(target);
  const std::string message = errorMessage(
      [&] { loadCheckpoint(file, "resnet18", *target.model, target.optimizer.get()); });
  expectContains(message, "checkpoint " + file + " was saved from model tinynet, not resnet18");
  EXPECT_EQ(snapshot(target), before);
}

TEST_F(Checkpoint, RefusesAnotherArchitectureNamingTheParameterAndBothShapes) {
  TrainingRun saved;
  const std::string file = saveAfterTwoSteps(saved);
  TrainingRun wider({.initSeed = 9, .channels = 8});
  wider.step();
  const auto before = snapshot(wider);
  const std::string message =
      errorMessage([&] { loadCheckpoint(file, kModelName, *wider.model, wider.optimizer.get()); });
  expectContains(message, "checkpoint " + file + " does not fit model tinynet");
  expectContains(message,
                 "parameter 0.weight: checkpoint float32[4, 2, 3, 3], model float32[8, 2, 3, 3]");
  expectContains(message, "buffer 1.running_mean: checkpoint float32[4], model float32[8]");
  expectContains(message, "parameter 5.weight: checkpoint float32[3, 64], model float32[3, 128]");
  EXPECT_EQ(snapshot(wider), before);
}

TEST_F(Checkpoint, RefusesMissingAndUnexpectedParameters) {
  TrainingRun withoutBias({.linearBias = false});
  const std::string file = saveAfterTwoSteps(withoutBias);
  TrainingRun withBias({.initSeed = 9});
  const auto before = snapshot(withBias);
  const std::string missing = errorMessage(
      [&] { loadCheckpoint(file, kModelName, *withBias.model, withBias.optimizer.get()); });
  expectContains(missing, "missing parameter 5.bias");
  EXPECT_EQ(snapshot(withBias), before);

  const std::string withBiasFile = path("with_bias.bin").string();
  saveCheckpoint(withBiasFile, *withBias.model, withBias.optimizer.get(), withBias.state());
  TrainingRun target({.initSeed = 10, .linearBias = false});
  const auto targetBefore = snapshot(target);
  const std::string unexpected = errorMessage(
      [&] { loadCheckpoint(withBiasFile, kModelName, *target.model, target.optimizer.get()); });
  expectContains(unexpected, "unexpected parameter 5.bias");
  EXPECT_EQ(snapshot(target), targetBefore);
}

TEST_F(Checkpoint, RefusesOtherOptimizerSettings) {
  TrainingRun saved;
  const std::string file = saveAfterTwoSteps(saved);
  TrainingRun target({.sgd = {.learningRate = 0.05f, .momentum = 0.5f, .weightDecay = 1e-4f}});
  target.step();
  const auto before = snapshot(target);
  const std::string message = errorMessage(
      [&] { loadCheckpoint(file, kModelName, *target.model, target.optimizer.get()); });
  expectContains(message, "SGD momentum: checkpoint 0.9, this run 0.5");
  EXPECT_EQ(snapshot(target), before);
}

// Damaged files: each edit of a good checkpoint must be refused with its own message, before
// the model is touched.
TEST_F(Checkpoint, RefusesDamagedFiles) {
  TrainingRun saved;
  const std::string file = saveAfterTwoSteps(saved);
  const std::vector<uint8_t> good = readFileBytes(file);
  ASSERT_GT(good.size(), 1000u);

  TrainingRun target({.initSeed = 9});
  const auto before = snapshot(target);
  const auto refusal = [&](const std::vector<uint8_t>& bytes) {
    const fs::path damaged = path("damaged.bin");
    writeFileBytes(damaged, bytes);
    const std::string message = errorMessage([&] {
      loadCheckpoint(damaged.string(), kModelName, *target.model, target.optimizer.get());
    });
    expectContains(message, damaged.string());
    EXPECT_EQ(snapshot(target), before) << "a refused load changed the model: " << message;
    return message;
  };

  const std::vector<uint8_t> truncated(good.begin(), good.begin() + 1000);
  expectContains(refusal(truncated),
                 "truncated: header says " + std::to_string(good.size()) + " bytes, file has 1000");
  expectContains(refusal({good.begin(), good.begin() + 10}), "truncated");
  expectContains(refusal({}), "truncated");

  std::vector<uint8_t> flipped = good;
  flipped[good.size() / 2] ^= 0x01;
  expectContains(refusal(flipped), "checksum mismatch: the file is damaged");

  std::vector<uint8_t> wrongMagic = good;
  wrongMagic[0] = 'X';
  expectContains(refusal(wrongMagic), "not an imerge checkpoint");

  std::vector<uint8_t> newer = good;
  newer[8] = static_cast<uint8_t>(kCheckpointFormatVersion + 1);
  const std::string newerMessage = refusal(newer);
  expectContains(newerMessage, "format version " + std::to_string(kCheckpointFormatVersion + 1));
  expectContains(newerMessage, "newer than this build");

  std::vector<uint8_t> longer = good;
  longer.push_back(0);
  expectContains(refusal(longer), "trailing bytes");

  // Consistent length and checksum around a payload cut short: the structure check catches it.
  std::vector<uint8_t> cut(good.begin(), good.end() - 8);
  const uint64_t length = cut.size();
  std::memcpy(cut.data() + 16, &length, 8);
  const auto crc =
      static_cast<uint32_t>(::crc32(0, cut.data() + 24, static_cast<uInt>(cut.size() - 24)));
  std::memcpy(cut.data() + 12, &crc, 4);
  expectContains(refusal(cut), "is malformed");

  const std::string missingFile = errorMessage(
      [&] { loadCheckpoint(path("absent.bin").string(), kModelName, *target.model, nullptr); });
  expectContains(missingFile, "cannot read checkpoint " + path("absent.bin").string());
  expectContains(missingFile, "No such file or directory");
}

TEST_F(Checkpoint, SavingIntoAMissingDirectoryFailsNamingThePath) {
  TrainingRun run;
  run.step();
  const fs::path target = directory_ / "missing" / "ck.bin";
  const std::string message = errorMessage(
      [&] { saveCheckpoint(target.string(), *run.model, run.optimizer.get(), run.state()); });
  expectContains(message, "cannot save checkpoint " + target.string());
  expectContains(message, "No such file or directory");
  EXPECT_TRUE(filesIn(directory_).empty());
}

TEST_F(Checkpoint, AFailedWriteLeavesTheExistingCheckpointByteIdentical) {
  TrainingRun run;
  const std::string file = saveAfterTwoSteps(run);
  const std::vector<uint8_t> before = readFileBytes(file);

  // The temporary file's name is taken by a directory, so the write cannot even start.
  const fs::path blocker = file + ".tmp-" + std::to_string(::getpid());
  fs::create_directory(blocker);
  run.step();
  const std::string message =
      errorMessage([&] { saveCheckpoint(file, *run.model, run.optimizer.get(), run.state()); });
  expectContains(message, "cannot save checkpoint " + file);
  expectContains(message, blocker.string());
  expectContains(message, "Is a directory");
  EXPECT_EQ(readFileBytes(file), before);
  EXPECT_TRUE(fs::is_directory(blocker)) << "the save removed something it did not create";
  fs::remove(blocker);
  EXPECT_EQ(filesIn(directory_), std::set<std::string>{"ck.bin"});

  // Once the obstacle is gone, the same save replaces the checkpoint.
  saveCheckpoint(file, *run.model, run.optimizer.get(), run.state());
  EXPECT_NE(readFileBytes(file), before);
  EXPECT_EQ(inspectCheckpoint(file).state.step, 3);
  EXPECT_EQ(filesIn(directory_), std::set<std::string>{"ck.bin"});
}

TEST_F(Checkpoint, RefusesAnOptimizerBuiltFromOtherParameters) {
  TrainingRun run;
  run.step();
  Sgd partial({run.model->parameters()[0]}, {.learningRate = 0.1f});
  const std::string message =
      errorMessage([&] { saveCheckpoint(path(), *run.model, &partial, run.state()); });
  expectContains(message, "the optimizer holds 1 parameters but the model has 6");
  EXPECT_TRUE(filesIn(directory_).empty());
}

}  // namespace
}  // namespace imerge::io
