// Data-parallel training under mpirun against one process: for every strategy, N ranks that
// train 5 steps on their own micro-batches end with the same parameters (to 1e-5 relative) as
// one process that runs all N micro-batches per step and averages their gradients; with and
// without batch-norm. Also: rank 0's parameters win at start, mismatched models are refused at
// start-up naming the rank, the compute profile is the slowest rank's (the latest ready time
// over ranks, the same on every rank) and so is the plan, and the trace shows all-reduces
// overlapping backward for wfbp, mgwfbp and imerge but not for default.
//
// Run by CTest as `mpirun -np N data_parallel_mpitest` for N = 2, 3, 4; every rank runs every
// test, only rank 0 prints, and the exit status is the same on all ranks. With
// IMERGE_TEST_POISON_RANK=R, rank R writes a NaN into its replica after step 3, and every
// MatchesOneProcess case must fail (CTest's data_parallel_nan_fails_every_strategy).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "autograd/ops/loss.h"
#include "distributed/comm/mpi_communicator.h"
#include "distributed/planning/comm_model.h"
#include "distributed/planning/planner.h"
#include "distributed/runtime/data_parallel.h"
#include "layers/layers.h"
#include "support/compare.h"
#include "support/error_text.h"
#include "support/mpi_test_world.h"
#include "support/parameter_values.h"

namespace imerge::distributed {
namespace {

Communicator* world = nullptr;

constexpr int64_t kMicroBatch = 4;
constexpr int64_t kSteps = 5;

// conv(3->8) [BN] ReLU conv(8->8) [BN] ReLU flatten linear(8*8*8 -> 10) on 3x8x8 images.
std::shared_ptr<layers::Sequential> makeModel(bool batchNorm, uint64_t seed) {
  Generator generator(seed);
  auto net = std::make_shared<layers::Sequential>();
  net->add(std::make_shared<layers::Conv2d>(3, 8, 3, 1, 1, true, generator));
  if (batchNorm) net->add(std::make_shared<layers::BatchNorm2d>(8));
  net->add(std::make_shared<layers::ReLU>());
  net->add(std::make_shared<layers::Conv2d>(8, 8, 3, 1, 1, !batchNorm, generator));
  if (batchNorm) net->add(std::make_shared<layers::BatchNorm2d>(8));
  net->add(std::make_shared<layers::ReLU>());
  net->add(std::make_shared<layers::Flatten>());
  net->add(std::make_shared<layers::Linear>(8 * 8 * 8, 10, true, generator));
  return net;
}

optim::SgdOptions sgdOptions() {
  return {.learningRate = 0.1f, .momentum = 0.9f, .weightDecay = 5e-4f};
}

// Micro-batch `part` of step `step`'s global batch: the same on every rank.
std::pair<Tensor, Tensor> microBatch(int64_t step, int part) {
  Generator generator(1000 + 97 * step + part);
  Tensor images = Tensor::empty({kMicroBatch, 3, 8, 8});
  generator.fillNormal(images, 0.0f, 1.0f);
  std::vector<int64_t> labels(kMicroBatch);
  for (auto& label : labels) label = static_cast<int64_t>(generator.nextInt(10));
  return {images, Tensor::fromVector(labels, {kMicroBatch})};
}

// A communication model with the knee of measured ones: flat below 8 KiB, then linear.
std::vector<CommSample> kneeSamples() {
  std::vector<CommSample> samples;
  for (size_t bytes = 4; bytes <= (size_t{16} << 20); bytes *= 2) {
    const double seconds = bytes < 8192 ? 30e-6 : 60e-6 + bytes / 2e9;
    samples.push_back({bytes, 2, seconds});
  }
  return samples;
}

// One process: every micro-batch's gradient accumulated, then averaged, then one SGD step.
std::vector<std::vector<float>> trainOneProcess(bool batchNorm, int workers) {
  auto model = makeModel(batchNorm, 42);
  optim::Sgd optimizer(model->parameters(), sgdOptions());
  for (int64_t step = 0; step < kSteps; ++step) {
    optimizer.zeroGrad();
    for (int part = 0; part < workers; ++part) {
      auto [images, labels] = microBatch(step, part);
      autograd::softmaxCrossEntropy(model->forward(autograd::Variable(images)), labels).backward();
    }
    for (autograd::Variable& parameter : model->parameters()) {
      float* grad = parameter.grad().data<float>();
      for (int64_t i = 0; i < parameter.numel(); ++i) grad[i] /= static_cast<float>(workers);
    }
    optimizer.step();
  }
  return testing::parameterValues(*model);
}

DataParallelOptions optionsFor(const std::string& strategy) {
  DataParallelOptions options;
  options.strategy = strategy;
  options.planner.fusionBytes = 2048;   // several buckets even for this small model
  options.planner.sliceElements = 100;  // several slices per tensor
  options.commSamples = kneeSamples();
  options.warmupSteps = 2;  // the plan is rebuilt from measured times after step 2 of 5
  return options;
}

// The rank IMERGE_TEST_POISON_RANK names, or -1: the deliberate fault that shows the equivalence
// check can fail.
int poisonedRank() {
  const char* rank = std::getenv("IMERGE_TEST_POISON_RANK");
  return rank ? std::atoi(rank) : -1;
}

// This rank's replica after 5 data-parallel steps. Ranks other than 0 start from other weights,
// which the broadcast of rank 0's must replace.
std::vector<std::vector<float>> trainDataParallel(const std::string& strategy, bool batchNorm,
                                                  int64_t* plansBuilt) {
  auto model = makeModel(batchNorm, 42 + static_cast<uint64_t>(world->rank()));
  optim::Sgd optimizer(model->parameters(), sgdOptions());
  DataParallel parallel(model, *world, optionsFor(strategy));
  for (int64_t step = 0; step < kSteps; ++step) {
    auto [images, labels] = microBatch(step, world->rank());
    parallel.backward(
        autograd::softmaxCrossEntropy(parallel.forward(autograd::Variable(images)), labels));
    parallel.step(optimizer);
    if (step == 2 && world->rank() == poisonedRank()) {
      parallel.synchronize();
      model->parameters().front().tensor().data<float>()[0] =
          std::numeric_limits<float>::quiet_NaN();
    }
  }
  parallel.synchronize();
  *plansBuilt = parallel.plansBuilt();
  return testing::parameterValues(*model);
}

struct Case {
  std::string strategy;
  bool batchNorm;
};

class MatchesOneProcess : public ::testing::TestWithParam<Case> {};

TEST_P(MatchesOneProcess, AfterFiveSteps) {
  const Case& c = GetParam();
  int64_t plansBuilt = 0;
  const std::vector<std::vector<float>> distributed =
      trainDataParallel(c.strategy, c.batchNorm, &plansBuilt);
  const std::vector<std::vector<float>> reference = trainOneProcess(c.batchNorm, world->size());
  EXPECT_EQ(plansBuilt, 2) << "the start-up plan and the one built after the warm-up";
  // Relative to each tensor's scale: summing N gradients in MPI's order instead of one
  // process's changes the last bits, and batch-norm magnifies that for elements near zero.
  const std::string what = c.strategy + (c.batchNorm ? " with" : " without") + " batch-norm on " +
                           std::to_string(world->size()) + " ranks";
  const ::testing::AssertionResult close = testing::parametersCloseToScale(
      distributed, reference, 1e-5, what, testing::parameterNames(*makeModel(c.batchNorm, 42)));
  if (world->rank() == 0) std::printf("%s\n", close.message());
  EXPECT_TRUE(close);
}

std::vector<Case> allCases() {
  std::vector<Case> cases;
  for (const std::string& strategy : strategyNames()) {
    for (bool batchNorm : {false, true}) cases.push_back({strategy, batchNorm});
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(EveryStrategy, MatchesOneProcess, ::testing::ValuesIn(allCases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.strategy + (info.param.batchNorm ? "_bn" : "_plain");
                         });

TEST(DataParallelStartUp, EveryRankStartsFromRankZerosParameters) {
  auto model = makeModel(true, 42 + static_cast<uint64_t>(world->rank()));
  DataParallel parallel(model, *world, optionsFor("wfbp"));
  auto rankZero = makeModel(true, 42);
  const auto ours = model->namedParameters(), theirs = rankZero->namedParameters();
  for (size_t i = 0; i < ours.size(); ++i) {
    EXPECT_EQ(ours[i].second.tensor().toVector(), theirs[i].second.tensor().toVector())
        << ours[i].first;
  }
}

TEST(DataParallelStartUp, AMismatchedModelIsRefusedNamingTheRank) {
  // The last rank builds a model with batch-norm, the others without.
  const int last = world->size() - 1;
  auto model = makeModel(world->rank() == last, 42);
  const std::string message =
      testing::errorMessage([&] { DataParallel parallel(model, *world, optionsFor("wfbp")); });
  testing::expectContains(message, "rank(s) " + std::to_string(last) + " run a different model");
}

TEST(DataParallelStartUp, AMismatchedStrategyIsRefusedNamingTheRank) {
  auto model = makeModel(false, 42);
  const std::string message = testing::errorMessage([&] {
    DataParallel parallel(model, *world, optionsFor(world->rank() == 1 ? "imerge" : "wfbp"));
  });
  testing::expectContains(message, "rank(s) 1 run a different model, strategy");
}

// Rank r's forward takes 0.1 (r + 1) s and its two gradients are ready 0.5 - 0.1 r and
// 1 + 0.2 r s into backward. Over N ranks the first gradient is last ready at 0.6 s from the
// start on every rank and the second at 1.1 + 0.3 (N - 1) s on the last, so behind the longest
// forward (0.1 N s) the slowest rank's ready times are 0.6 - 0.1 N and 0.8 + 0.2 N.
TEST(DataParallelProfile, ReadyTimesAreTheLatestOverRanks) {
  const double r = world->rank(), n = world->size();
  std::deque<double> forward = {0.1 * (r + 1), 0.2};
  std::deque<std::vector<double>> ready = {{0.5 - 0.1 * r, 1.0 + 0.2 * r}, {0.3, 0.4}};
  takeLatestOverRanks(forward, ready, *world);
  EXPECT_NEAR(forward[0], 0.1 * n, 1e-12);
  EXPECT_NEAR(ready[0][0], 0.6 - 0.1 * n, 1e-12);
  EXPECT_NEAR(ready[0][1], 0.8 + 0.2 * n, 1e-12);
  // The second step is the same on every rank: unchanged (but for rounding).
  EXPECT_NEAR(forward[1], 0.2, 1e-12);
  EXPECT_NEAR(ready[1][0], 0.3, 1e-12);
  EXPECT_NEAR(ready[1][1], 0.4, 1e-12);
}

TEST(DataParallelProfile, RanksThatProfiledDifferentStepsAreRefusedOnEveryRank) {
  std::deque<double> forward(world->rank() == 1 ? 3 : 2, 0.1);
  std::deque<std::vector<double>> ready(forward.size(), std::vector<double>{0.2});
  testing::expectContains(
      testing::errorMessage([&] { takeLatestOverRanks(forward, ready, *world); }),
      "the ranks profiled between 2 and 3 steps");
}

// Trained for real, the profile every rank computes is the same one.
TEST(DataParallelProfile, EveryRankComputesTheSameProfile) {
  auto model = makeModel(false, 42);
  optim::Sgd optimizer(model->parameters(), sgdOptions());
  DataParallel parallel(model, *world, optionsFor("wfbp"));
  for (int64_t step = 0; step < 3; ++step) {
    auto [images, labels] = microBatch(step, world->rank());
    parallel.backward(
        autograd::softmaxCrossEntropy(parallel.forward(autograd::Variable(images)), labels));
    parallel.step(optimizer);
  }
  parallel.synchronize();
  const ComputeProfile profile = parallel.computeProfile();
  std::vector<double> mine = {profile.forwardSeconds()};
  for (const TensorInfo& tensor : profile.tensors) mine.push_back(tensor.backwardSeconds);
  std::vector<double> rankZeros = mine;
  world->broadcast(rankZeros.data(), rankZeros.size() * sizeof(double), 0);
  EXPECT_EQ(mine, rankZeros);
}

// The plan a run installs is the one the simulator makes from the run's profile: both take the
// slowest rank's ready times. The last rank runs a 32x larger micro-batch, so its gradients are
// ready far later than rank 0's and a plan from rank 0's own times would differ. Trained for
// exactly the warm-up, the plan and the profile come from the same steps.
TEST(DataParallelProfile, ThePlanIsTheOneTheProfileGives) {
  for (const std::string strategy : {"mgwfbp", "imerge"}) {
    SCOPED_TRACE(strategy);
    auto model = makeModel(false, 42);
    optim::Sgd optimizer(model->parameters(), sgdOptions());
    DataParallelOptions options = optionsFor(strategy);
    DataParallel parallel(model, *world, options);
    const int64_t batch = world->rank() == world->size() - 1 ? 32 * kMicroBatch : kMicroBatch;
    Generator generator(7);
    for (int64_t step = 0; step < options.warmupSteps; ++step) {
      Tensor images = Tensor::empty({batch, 3, 8, 8});
      generator.fillNormal(images, 0.0f, 1.0f);
      Tensor labels = Tensor::fromVector(std::vector<int64_t>(batch, 1), {batch});
      parallel.backward(
          autograd::softmaxCrossEntropy(parallel.forward(autograd::Variable(images)), labels));
      parallel.step(optimizer);
    }
    parallel.synchronize();
    const ComputeProfile profile = parallel.computeProfile();
    const Plan fromProfile = makePlanner(strategy, options.planner)
                                 ->plan(profile.tensors, *parallel.beliefModel(), world->size());
    ASSERT_EQ(parallel.plan().buckets.size(), fromProfile.buckets.size());
    for (size_t bucket = 0; bucket < fromProfile.buckets.size(); ++bucket) {
      EXPECT_EQ(parallel.plan().buckets[bucket].tensors, fromProfile.buckets[bucket].tensors)
          << "bucket " << bucket;
    }
  }
}

// Overlap, from the trace: in how many of the steps after the warm-up does an all-reduce start
// before that step's backward has ended?
int stepsWithOverlap(const std::string& strategy) {
  Generator generator(3);
  auto model = std::make_shared<layers::Sequential>();
  model->add(std::make_shared<layers::Conv2d>(3, 32, 3, 1, 1, true, generator));
  model->add(std::make_shared<layers::ReLU>());
  // Two convolutions behind the large linear layer: about 10 ms of backward (one thread) left
  // when its gradient is ready, far more than the communication thread needs to start.
  for (int layer = 0; layer < 2; ++layer) {
    model->add(std::make_shared<layers::Conv2d>(32, 32, 3, 1, 1, true, generator));
    model->add(std::make_shared<layers::ReLU>());
  }
  model->add(std::make_shared<layers::Flatten>());
  model->add(std::make_shared<layers::Linear>(32 * 16 * 16, 64, true, generator));  // 2 MiB
  optim::Sgd optimizer(model->parameters(), sgdOptions());
  Trace trace(world->rank());
  DataParallelOptions options = optionsFor(strategy);
  options.trace = &trace;
  DataParallel parallel(model, *world, options);
  const int64_t steps = 6;
  for (int64_t step = 0; step < steps; ++step) {
    Tensor images = Tensor::empty({32, 3, 16, 16});
    generator.fillNormal(images, 0.0f, 1.0f);
    Tensor labels = Tensor::fromVector(std::vector<int64_t>(32, 1), {32});
    parallel.backward(
        autograd::softmaxCrossEntropy(parallel.forward(autograd::Variable(images)), labels));
    parallel.step(optimizer);
  }
  parallel.synchronize();
  int overlapping = 0;
  for (int64_t step = options.warmupSteps; step < steps; ++step) {
    CommClock::time_point backwardEnd{}, firstAllreduce = CommClock::time_point::max();
    for (const TraceEvent& event : trace.events()) {
      if (event.step != step) continue;
      if (event.category == "backward") backwardEnd = std::max(backwardEnd, event.end);
      if (event.category == "allreduce") firstAllreduce = std::min(firstAllreduce, event.start);
    }
    EXPECT_NE(backwardEnd, CommClock::time_point{}) << "no backward in step " << step;
    EXPECT_NE(firstAllreduce, CommClock::time_point::max()) << "no all-reduce in step " << step;
    overlapping += firstAllreduce < backwardEnd;
  }
  return overlapping;
}

TEST(DataParallelTrace, AllReducesOverlapBackwardExceptForDefault) {
  // Every step could overlap; at least one must, so that a scheduler hiccup on a loaded
  // 2-core machine (the communication thread starts late) cannot fail the test.
  EXPECT_EQ(stepsWithOverlap("default"), 0);
  EXPECT_GE(stepsWithOverlap("wfbp"), 1);
  EXPECT_GE(stepsWithOverlap("mgwfbp"), 1);
  EXPECT_GE(stepsWithOverlap("imerge"), 1);
}

}  // namespace
}  // namespace imerge::distributed

int main(int argc, char** argv) {
  using namespace imerge::distributed;
  ::testing::InitGoogleTest(&argc, argv);
  imerge::setNumThreads(1);
  std::unique_ptr<MpiCommunicator> communicator =
      imerge::test::startMpiTestWorld("data_parallel_mpitest", {.timeoutSeconds = 60});
  if (!communicator) return 1;
  world = communicator.get();
  int64_t failed = RUN_ALL_TESTS() != 0;
  world->allreduceMax(&failed, 1);  // one verdict for the whole job
  communicator->shutdown();
  return static_cast<int>(failed);
}
