// Data-parallel training under mpirun against one process: for every strategy, N ranks that
// train 5 steps on their own micro-batches end with the same parameters (to 1e-5 relative) as
// one process that runs all N micro-batches per step and averages their gradients; with and
// without batch-norm. Also: rank 0's parameters win at start, mismatched models are refused at
// start-up naming the rank, the compute profile is the slowest rank's (the latest ready time
// over ranks, the same on every rank) and so is the plan, and the trace shows all-reduces
// overlapping backward for wfbp, mgwfbp and imerge but not for default, and imerge-overlap,
// planned for a slow network, running its all-gathers and deferred all-reduces between the end
// of backward and the next forward and training as one process does (the MatchesOneProcess
// cases' model is too small for its plans to split or defer anything).
//
// Run by CTest as `mpirun -np N data_parallel_mpitest` for N = 2, 3, 4; every rank runs every
// test, only rank 0 prints, and the exit status is the same on all ranks. With
// IMERGE_TEST_POISON_RANK=R, rank R writes a NaN into its replica after step 3, and every
// MatchesOneProcess case must fail (CTest's data_parallel_nan_fails_every_strategy).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <map>
#include <memory>

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

using BatchOf = std::function<std::pair<Tensor, Tensor>(int64_t step, int part)>;

// One process: every micro-batch's gradient accumulated, then averaged, then one SGD step.
std::vector<std::vector<float>> trainOneProcess(const std::shared_ptr<layers::Module>& model,
                                                const BatchOf& batchOf, int workers,
                                                int64_t steps) {
  optim::Sgd optimizer(model->parameters(), sgdOptions());
  for (int64_t step = 0; step < steps; ++step) {
    optimizer.zeroGrad();
    for (int part = 0; part < workers; ++part) {
      auto [images, labels] = batchOf(step, part);
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

std::vector<std::vector<float>> trainOneProcess(bool batchNorm, int workers) {
  return trainOneProcess(makeModel(batchNorm, 42), microBatch, workers, kSteps);
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
                           // Test names take letters, digits and '_' only.
                           std::string name = info.param.strategy;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name + (info.param.batchNorm ? "_bn" : "_plain");
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

// The trace model: three convolutions and a 2 MiB linear layer, on 16x16 images.
std::shared_ptr<layers::Sequential> makeTraceModel() {
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
  return model;
}

constexpr int64_t kTracedSteps = 6;

// Rank `part`'s 32 images of step `step`.
std::pair<Tensor, Tensor> traceBatch(int64_t step, int part) {
  Generator generator(5000 + 97 * step + part);
  Tensor images = Tensor::empty({32, 3, 16, 16});
  generator.fillNormal(images, 0.0f, 1.0f);
  return {images, Tensor::fromVector(std::vector<int64_t>(32, 1), {32})};
}

// The trace model trained kTracedSteps steps, traced, each rank on its own images.
struct TracedRun {
  explicit TracedRun(int rank) : trace(rank) {}
  Trace trace;
  Plan plan;
  int64_t warmupSteps = 0;
  std::vector<std::vector<float>> parameters;  // after the last step
};

// `samples`: the communication model to plan with instead of kneeSamples().
std::unique_ptr<TracedRun> tracedRun(const std::string& strategy,
                                     std::vector<CommSample> samples = {}) {
  auto model = makeTraceModel();
  optim::Sgd optimizer(model->parameters(), sgdOptions());
  auto run = std::make_unique<TracedRun>(world->rank());
  DataParallelOptions options = optionsFor(strategy);
  options.trace = &run->trace;
  if (!samples.empty()) {
    // The split halves as the ring rule has them, instead of a start-up measurement.
    for (CommSample half : samples) {
      half.seconds /= 2;
      options.reduceScatterSamples.push_back(half);
      options.allGatherSamples.push_back(half);
    }
    options.commSamples = std::move(samples);
  }
  run->warmupSteps = options.warmupSteps;
  DataParallel parallel(model, *world, options);
  for (int64_t step = 0; step < kTracedSteps; ++step) {
    auto [images, labels] = traceBatch(step, world->rank());
    parallel.backward(
        autograd::softmaxCrossEntropy(parallel.forward(autograd::Variable(images)), labels));
    parallel.step(optimizer);
  }
  parallel.synchronize();
  run->plan = parallel.plan();
  run->parameters = testing::parameterValues(*model);
  return run;
}

// Overlap, from the trace: in how many of the steps after the warm-up does an all-reduce start
// before that step's backward has ended?
int stepsWithOverlap(const std::string& strategy) {
  const std::unique_ptr<TracedRun> run = tracedRun(strategy);
  int overlapping = 0;
  for (int64_t step = run->warmupSteps; step < kTracedSteps; ++step) {
    CommClock::time_point backwardEnd{}, firstAllreduce = CommClock::time_point::max();
    for (const TraceEvent& event : run->trace.events()) {
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

// imerge-overlap's forward phase, from the trace of a run planned for a slow network (halves at
// the ring rule's cost): after the warm-up, each collective of its split and deferred buckets
// (all-gathers, all-reduces before the forward) starts after the backward that produced it has
// ended and ends before the next forward does (whose layers wait for it). A collective is
// recorded in the step whose forward it ends in, or in its own step when it ended before that
// forward began. (The order of reduce-scatters among the other collectives is reducer_mpitest's.)
TEST(DataParallelTrace, ImergeOverlapRunsItsForwardPhaseDuringTheNextForward) {
  // Planned for a network where an all-reduce costs 5 ms plus 10 ns per byte (20 ms for the
  // linear layer's 2 MiB), far more than the backward behind it: splitting and deferring pay.
  std::vector<CommSample> slow;
  for (size_t bytes = 4; bytes <= (size_t{16} << 20); bytes *= 2) {
    slow.push_back({bytes, 2, 5e-3 + 1e-8 * static_cast<double>(bytes)});
  }
  const std::unique_ptr<TracedRun> run = tracedRun("imerge-overlap", slow);
  ASSERT_TRUE(run->plan.hasForwardPhase()) << "a plan without split or deferred buckets";
  std::vector<uint8_t> late(run->plan.buckets.size());
  int counts[3] = {0, 0, 0};
  for (size_t b = 0; b < late.size(); ++b) {
    late[b] = run->plan.buckets[b].schedule != Bucket::Schedule::Backward;
    ++counts[static_cast<int>(run->plan.buckets[b].schedule)];
  }
  if (world->rank() == 0) {
    std::printf(
        "imerge-overlap's plan: %d buckets all-reduced in backward, %d split, %d "
        "all-reduced before the next forward\n",
        counts[0], counts[1], counts[2]);
  }
  auto bucketOf = [](const TraceEvent& event) {
    return static_cast<size_t>(std::stoul(event.name.substr(event.name.rfind(' ') + 1)));
  };
  std::map<int64_t, std::pair<CommClock::time_point, CommClock::time_point>> forwardOf;
  std::map<int64_t, CommClock::time_point> backwardEndOf;
  for (const TraceEvent& event : run->trace.events()) {
    if (event.category == "forward") forwardOf[event.step] = {event.start, event.end};
    if (event.category == "backward")
      backwardEndOf[event.step] = std::max(backwardEndOf[event.step], event.end);
  }
  int forwardPhase = 0;
  for (const TraceEvent& event : run->trace.events()) {
    const bool gather = event.category == "allgather";
    const bool deferred = event.category == "allreduce" && late[bucketOf(event)];
    if (event.step <= run->warmupSteps || !(gather || deferred)) continue;
    // The last backward's forward phase has no next forward: synchronize() waited for it.
    if (event.start >= backwardEndOf.rbegin()->second) continue;
    ++forwardPhase;
    bool between = false;
    for (int64_t step : {event.step - 1, event.step}) {
      between = between ||
                (backwardEndOf.count(step) && forwardOf.count(step + 1) &&
                 backwardEndOf[step] <= event.start && event.end <= forwardOf[step + 1].second);
    }
    EXPECT_TRUE(between) << event.name << " in step " << event.step
                         << " is not between a backward's end and the next forward's end";
  }
  EXPECT_GE(forwardPhase, 1);
  // And the run trained as one process does on all ranks' images: the split and deferred
  // buckets averaged every element, and each layer was updated after its own.
  const ::testing::AssertionResult close = testing::parametersCloseToScale(
      run->parameters, trainOneProcess(makeTraceModel(), traceBatch, world->size(), kTracedSteps),
      1e-5, "imerge-overlap on a slow network", testing::parameterNames(*makeTraceModel()));
  if (world->rank() == 0) std::printf("%s\n", close.message());
  EXPECT_TRUE(close);
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
