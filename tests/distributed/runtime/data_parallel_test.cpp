// DataParallel in a world of one (SingleProcessCommunicator): the same parameters as plain
// training, re-planning when the measured backward times drift (and only then), the steps a GPU
// run profiles, and the errors a user can cause: an optimizer over other parameters, a parameter
// without a gradient.
#include "distributed/runtime/data_parallel.h"

#include <gtest/gtest.h>

#include "autograd/ops/loss.h"
#include "layers/layers.h"
#include "support/error_text.h"

namespace imerge::distributed {
namespace {

std::shared_ptr<layers::Sequential> makeModel() {
  Generator generator(5);
  auto net = std::make_shared<layers::Sequential>();
  net->add(std::make_shared<layers::Conv2d>(3, 4, 3, 1, 1, true, generator));
  net->add(std::make_shared<layers::BatchNorm2d>(4));
  net->add(std::make_shared<layers::ReLU>());
  net->add(std::make_shared<layers::Flatten>());
  net->add(std::make_shared<layers::Linear>(4 * 6 * 6, 5, true, generator));
  return net;
}

std::pair<Tensor, Tensor> batch(int64_t step) {
  Generator generator(100 + step);
  Tensor images = Tensor::empty({3, 3, 6, 6});
  generator.fillNormal(images, 0.0f, 1.0f);
  return {images, Tensor::fromVector(std::vector<int64_t>{0, 3, 1}, {3})};
}

optim::SgdOptions sgdOptions() {
  return {.learningRate = 0.1f, .momentum = 0.9f, .weightDecay = 1e-4f};
}

std::vector<CommSample> samples() {
  return {{4, 1, 1e-5}, {1024, 1, 1.2e-5}, {65536, 1, 4e-5}, {1 << 20, 1, 4e-4}};
}

DataParallelOptions optionsFor(const std::string& strategy) {
  DataParallelOptions options;
  options.strategy = strategy;
  options.commSamples = samples();
  options.warmupSteps = 2;
  return options;
}

void trainSteps(DataParallel& parallel, optim::Sgd& optimizer, int64_t steps) {
  for (int64_t step = 0; step < steps; ++step) {
    auto [images, labels] = batch(step);
    parallel.backward(
        autograd::softmaxCrossEntropy(parallel.forward(autograd::Variable(images)), labels));
    parallel.step(optimizer);
  }
  parallel.synchronize();
}

TEST(DataParallelWorldOfOne, MatchesPlainTrainingForEveryStrategy) {
  auto plain = makeModel();
  optim::Sgd plainOptimizer(plain->parameters(), sgdOptions());
  for (int64_t step = 0; step < 4; ++step) {
    auto [images, labels] = batch(step);
    plainOptimizer.zeroGrad();
    autograd::softmaxCrossEntropy(plain->forward(autograd::Variable(images)), labels).backward();
    plainOptimizer.step();
  }
  for (const std::string& strategy : strategyNames()) {
    SingleProcessCommunicator world;
    auto model = makeModel();
    optim::Sgd optimizer(model->parameters(), sgdOptions());
    DataParallel parallel(model, world, optionsFor(strategy));
    trainSteps(parallel, optimizer, 4);
    const auto ours = model->parameters(), theirs = plain->parameters();
    for (size_t i = 0; i < ours.size(); ++i) {
      EXPECT_EQ(ours[i].tensor().toVector(), theirs[i].tensor().toVector())
          << strategy << ": " << ours[i].name();
    }
    const std::vector<StepBreakdown> breakdowns = parallel.takeBreakdowns();
    EXPECT_EQ(breakdowns.size(), 4u) << strategy;
    for (const StepBreakdown& b : breakdowns) {
      EXPECT_GT(b.iterationSeconds, 0.0);
      EXPECT_LE(b.computeSeconds, b.iterationSeconds * 1.0001);
    }
  }
}

TEST(DataParallelWorldOfOne, ReplansWhenBackwardTimesDriftAndOnlyThen) {
  for (double tolerance : {0.0, 1e9}) {
    SingleProcessCommunicator world;
    auto model = makeModel();
    optim::Sgd optimizer(model->parameters(), sgdOptions());
    DataParallelOptions options = optionsFor("imerge");
    options.replanEverySteps = 2;
    options.driftTolerance = tolerance;  // 0: every check replans; 1e9: none does
    DataParallel parallel(model, world, options);
    trainSteps(parallel, optimizer, 8);
    // Start-up and after the warm-up, then checks after steps 4, 6 and 8.
    EXPECT_EQ(parallel.plansBuilt(), tolerance == 0.0 ? 5 : 2) << "tolerance " << tolerance;
  }
}

TEST(ProfilesStepOnDevice, TheWarmUpAndTheStepsBeforeEachDriftCheck) {
  // Warm-up 5, checks every 200 steps after it: the check after step index 204 (step_ 205)
  // reads the 5 steps 200..204.
  std::vector<int64_t> profiled;
  for (int64_t step = 0; step < 420; ++step) {
    if (profilesStepOnDevice(step, 5, 200, true)) profiled.push_back(step);
  }
  const std::vector<int64_t> expected = {0,   1,   2,   3,   4,   200, 201, 202,
                                         203, 204, 400, 401, 402, 403, 404};
  EXPECT_EQ(profiled, expected);
  // Strategies that plan from sizes alone profile only the warm-up.
  EXPECT_TRUE(profilesStepOnDevice(1, 2, 200, false));
  EXPECT_FALSE(profilesStepOnDevice(201, 2, 200, false));
  // A warm-up of 2 keeps 2 steps: 200 and 201 before the check at step_ 202.
  EXPECT_FALSE(profilesStepOnDevice(199, 2, 200, true));
  EXPECT_TRUE(profilesStepOnDevice(200, 2, 200, true));
  EXPECT_TRUE(profilesStepOnDevice(201, 2, 200, true));
  EXPECT_FALSE(profilesStepOnDevice(202, 2, 200, true));
  // Checks every step: every step is read.
  for (int64_t step = 0; step < 20; ++step) EXPECT_TRUE(profilesStepOnDevice(step, 3, 1, true));
}

TEST(DataParallelWorldOfOne, RefusesAnOptimizerOverOtherParameters) {
  SingleProcessCommunicator world;
  auto model = makeModel(), other = makeModel();
  optim::Sgd optimizer(other->parameters(), sgdOptions());
  DataParallel parallel(model, world, optionsFor("wfbp"));
  auto [images, labels] = batch(0);
  parallel.backward(
      autograd::softmaxCrossEntropy(parallel.forward(autograd::Variable(images)), labels));
  testing::expectContains(testing::errorMessage([&] { parallel.step(optimizer); }),
                          "not the model's 6 parameters in registration order");
}

TEST(DataParallelWorldOfOne, NamesAParameterThatGotNoGradient) {
  // The loss uses only the first convolution's output, so the linear layer gets no gradient.
  SingleProcessCommunicator world;
  auto model = makeModel();
  DataParallel parallel(model, world, optionsFor("wfbp"));
  auto [images, labels] = batch(0);
  auto& conv = *model->children()[0].second;
  parallel.forward(autograd::Variable(images));
  autograd::Variable partial = conv.forward(autograd::Variable(images));
  autograd::Variable loss = autograd::softmaxCrossEntropy(
      layers::Flatten().forward(partial), Tensor::fromVector(std::vector<int64_t>{0, 1, 2}, {3}));
  const std::string message = testing::errorMessage([&] { parallel.backward(loss); });
  testing::expectContains(message, "received no gradient");
  testing::expectContains(message, "'4.weight'");
}

}  // namespace
}  // namespace imerge::distributed
