// The Reducer against a fake communicator that records every collective: each tensor is
// reduced exactly once per step, buckets launch in plan order whatever order the hooks fire in,
// averaging happens once, priority slices go lowest layer first, and a parameter without a
// gradient is an error naming it.
#include "distributed/runtime/reducer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <random>
#include <thread>

#include "support/error_text.h"
#include "support/plan_builders.h"

namespace imerge::distributed {
namespace {

using testing::fifoPlan;
using testing::makeParameters;
using testing::reversed;

// One collective as the fake saw it: which elements of the flat buffer, and which collective.
struct Launch {
  int64_t firstElement = 0;
  int64_t elements = 0;
  std::string operation = "all-reduce";
  bool operator==(const Launch&) const = default;
};

// A rank of a world of `size` identical ranks: an all-reduce multiplies by `size` (the sum of
// `size` equal gradients), so an average taken once gives the gradient back. Tasks run on a
// thread of its own, like the MPI communicator's, so a priority task can wait for hooks.
class RecordingCommunicator final : public Communicator, private CollectiveOps {
 public:
  explicit RecordingCommunicator(int size) : size_(size), thread_([this] { run(); }) {}
  ~RecordingCommunicator() override {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }

  int rank() const override { return 0; }
  int size() const override { return size_; }
  std::string backendName() const override { return "recording"; }
  WorkHandle submit(std::string label, CommTask task) override {
    auto work = std::make_shared<Work>(std::move(label));
    {
      std::lock_guard lock(mutex_);
      queue_.emplace_back(work, std::move(task));
    }
    wake_.notify_all();
    return work;
  }
  [[noreturn]] void abort(int exitCode) override { std::abort(); }
  void shutdown() override {}

  void setBase(const float* base) { base_ = base; }
  std::vector<Launch> launches() {
    std::lock_guard lock(mutex_);
    return launches_;
  }
  size_t negotiations() {
    std::lock_guard lock(mutex_);
    return negotiations_;
  }

 private:
  void allreduceSum(float* data, size_t count) override {
    for (size_t i = 0; i < count; ++i) data[i] *= static_cast<float>(size_);
    std::lock_guard lock(mutex_);
    launches_.push_back({data - base_, static_cast<int64_t>(count)});
  }
  void allreduceSum(double*, size_t) override { ADD_FAILURE() << "the Reducer sums only floats"; }
  void allreduceSum(int64_t*, size_t) override { ADD_FAILURE() << "the Reducer sums only floats"; }
  void allreduceMax(double*, size_t) override {}
  void allreduceMax(int64_t*, size_t) override {}
  void allgather(const void*, void*, size_t) override {
    ADD_FAILURE() << "the Reducer all-gathers nothing";
  }
  // Identical ranks: this rank's block is summed to `size` times itself, and every other
  // rank's block, averaged there, equals the gradient already here.
  void reduceScatterSum(float* data, size_t count) override {
    const BlockRange mine = blockOf(count, 0, size_);
    for (size_t i = mine.offset; i < mine.offset + mine.count; ++i)
      data[i] *= static_cast<float>(size_);
    std::lock_guard lock(mutex_);
    launches_.push_back({data - base_, static_cast<int64_t>(count), "reduce-scatter"});
  }
  void allgatherBlocks(float* data, size_t count) override {
    std::lock_guard lock(mutex_);
    launches_.push_back({data - base_, static_cast<int64_t>(count), "all-gather"});
  }
  void allreduceBitwiseAnd(uint8_t*, size_t) override {
    std::lock_guard lock(mutex_);
    ++negotiations_;
  }
  void broadcast(void*, size_t, int) override {}
  void barrier() override {}

  void run() {
    while (true) {
      std::pair<WorkHandle, CommTask> next;
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;
        next = std::move(queue_.front());
        queue_.pop_front();
      }
      next.first->markStarted();
      std::exception_ptr error;
      try {
        next.second(*this);
      } catch (...) {
        error = std::current_exception();
      }
      next.first->markFinished(error);
    }
  }

  int size_;
  const float* base_ = nullptr;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::pair<WorkHandle, CommTask>> queue_;
  std::vector<Launch> launches_;
  size_t negotiations_ = 0;
  bool stopping_ = false;
  std::thread thread_;
};

// One step: every parameter gets gradient value (index + 1) and its hook fires in `hookOrder`.
void runStep(Reducer& reducer, std::vector<autograd::Variable>& parameters,
             const std::vector<size_t>& hookOrder, int64_t step) {
  reducer.prepareForBackward(step);
  for (size_t index : hookOrder) {
    parameters[index].addGrad(Tensor::full(parameters[index].shape(), float(index + 1)));
    reducer.onGradReady(index);
  }
  reducer.finish();
}

std::vector<Launch> launchesFor(const std::vector<size_t>& hookOrder, const Plan& plan, int steps) {
  auto parameters = makeParameters({5, 3, 8, 2, 7, 4});
  RecordingCommunicator communicator(4);
  Reducer reducer(parameters, communicator);
  reducer.setPlan(plan, reversed(parameters.size()));
  communicator.setBase(reducer.flatGradients().data<float>());
  for (int step = 0; step < steps; ++step) {
    runStep(reducer, parameters, hookOrder, step);
    for (size_t i = 0; i < parameters.size(); ++i) {
      // Summed over 4 equal ranks and averaged once: the rank's own gradient again.
      for (float value : parameters[i].grad().toVector()) EXPECT_FLOAT_EQ(value, float(i + 1));
      parameters[i].zeroGrad();
    }
  }
  return communicator.launches();
}

TEST(Reducer, LaunchOrderDoesNotDependOnHookOrder) {
  auto parameters = makeParameters({5, 3, 8, 2, 7, 4});
  const Plan plan = fifoPlan(parameters, reversed(6), {2, 1, 3});
  const std::vector<Launch> inBackwardOrder = launchesFor({5, 4, 3, 2, 1, 0}, plan, 2);
  std::mt19937 random(7);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<size_t> hookOrder = {5, 4, 3, 2, 1, 0};
    std::shuffle(hookOrder.begin(), hookOrder.end(), random);
    EXPECT_EQ(launchesFor(hookOrder, plan, 2), inBackwardOrder);
  }
  // Flat layout in backward order: p5 (4), p4 (7) | p3 (2) | p2 (8), p1 (3), p0 (5).
  const std::vector<Launch> expected = {{0, 11}, {11, 2}, {13, 16}};
  std::vector<Launch> twoSteps = expected;
  twoSteps.insert(twoSteps.end(), expected.begin(), expected.end());
  EXPECT_EQ(inBackwardOrder, twoSteps);
}

TEST(Reducer, EveryElementIsReducedExactlyOncePerStep) {
  auto parameters = makeParameters({5, 3, 8, 2, 7, 4});
  for (const std::vector<size_t>& groups :
       std::vector<std::vector<size_t>>{{1, 1, 1, 1, 1, 1}, {6}, {3, 3}, {1, 4, 1}}) {
    const std::vector<Launch> launches =
        launchesFor({0, 2, 1, 5, 3, 4}, fifoPlan(parameters, reversed(6), groups), 1);
    std::vector<int> covered(29, 0);
    for (const Launch& launch : launches) {
      for (int64_t e = launch.firstElement; e < launch.firstElement + launch.elements; ++e) {
        ++covered[static_cast<size_t>(e)];
      }
    }
    EXPECT_EQ(launches.size(), groups.size());
    EXPECT_TRUE(std::all_of(covered.begin(), covered.end(), [](int n) { return n == 1; }));
  }
}

TEST(Reducer, NothingIsLaunchedBeforeFinishWhenThePlanStartsAfterBackward) {
  auto parameters = makeParameters({5, 3, 8});
  RecordingCommunicator communicator(2);
  Reducer reducer(parameters, communicator);
  Plan plan = fifoPlan(parameters, reversed(3), {1, 1, 1});
  plan.startAfterBackward = true;
  reducer.setPlan(plan, reversed(3));
  reducer.prepareForBackward(0);
  for (size_t index : {2, 1, 0}) {
    parameters[index].addGrad(Tensor::full(parameters[index].shape(), 1.0f));
    reducer.onGradReady(index);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_TRUE(communicator.launches().empty());
  reducer.finish();
  EXPECT_EQ(communicator.launches().size(), 3u);
}

// Timing is an observer: a Reducer given a CommTimer reports one interval per bucket, with the
// bucket's bytes, in launch order, and the wait in finish(); one without a timer reports nothing
// and works the same.
TEST(Reducer, ReportsEachBucketAndTheWaitToItsTimer) {
  auto parameters = makeParameters({5, 3, 8});
  RecordingCommunicator communicator(2);
  CommTimer timer;
  for (CommTimer* observer : {&timer, static_cast<CommTimer*>(nullptr)}) {
    Reducer reducer(parameters, communicator);
    reducer.setTimer(observer);
    reducer.setPlan(fifoPlan(parameters, reversed(3), {1, 2}), reversed(3));
    reducer.prepareForBackward(0);
    for (size_t index : {2, 1, 0}) {
      parameters[index].addGrad(Tensor::full(parameters[index].shape(), 1.0f));
      reducer.onGradReady(index);
    }
    reducer.finish();
  }
  const std::vector<CommInterval> intervals = timer.takeIntervals();
  ASSERT_EQ(intervals.size(), 2u);  // from the timed Reducer only
  EXPECT_EQ(intervals[0].bucket, 0u);
  EXPECT_EQ(intervals[0].bytes, 8u * 4);        // p2
  EXPECT_EQ(intervals[1].bytes, (3u + 5) * 4);  // p1, p0
  for (const CommInterval& interval : intervals) EXPECT_LE(interval.start, interval.end);
  EXPECT_GT(timer.takeBookkeepingSeconds(), 0.0);
  EXPECT_TRUE(timer.takeIntervals().empty());  // taken
}

TEST(CommTimer, DropsWaitsOfTwoMicrosecondsOrLessAndStartsAfreshAfterEachTake) {
  CommTimer timer;
  const auto start = CommClock::now();
  timer.waited(start, start + std::chrono::microseconds(2));
  timer.waited(start, start + std::chrono::microseconds(3));
  timer.bookkeeping(0.25);
  timer.bookkeeping(0.5);
  const std::vector<CommInterval> waits = timer.takeWaits();
  ASSERT_EQ(waits.size(), 1u);
  EXPECT_EQ(waits[0].end - waits[0].start, std::chrono::microseconds(3));
  EXPECT_DOUBLE_EQ(timer.takeBookkeepingSeconds(), 0.75);
  EXPECT_TRUE(timer.takeWaits().empty());
  EXPECT_EQ(timer.takeBookkeepingSeconds(), 0.0);
}

TEST(Reducer, PrioritySlicesGoLowestLayerFirstAmongTheReady) {
  // Three tensors of 4 elements, two slices each; backward order p2, p1, p0; priority is the
  // forward position (p0 first). All hooks fire before the sender may start, so the slices go
  // strictly by priority: p0's, then p1's, then p2's.
  auto parameters = makeParameters({4, 4, 4});
  RecordingCommunicator communicator(2);
  Reducer reducer(parameters, communicator);
  Plan plan;
  plan.order = LaunchOrder::Priority;
  plan.overlapWithNextForward = true;
  for (size_t position = 0; position < 3; ++position) {
    for (size_t slice = 0; slice < 2; ++slice) {
      plan.buckets.push_back({{position}, 8, static_cast<int>(2 - position), slice * 8});
    }
  }
  reducer.setPlan(plan, reversed(3));
  communicator.setBase(reducer.flatGradients().data<float>());
  // Hold the communication thread until every hook has fired.
  std::mutex gate;
  gate.lock();
  communicator.submit("gate", [&](CollectiveOps&) { std::lock_guard hold(gate); });
  reducer.prepareForBackward(0);
  for (size_t index : {2, 1, 0}) {
    parameters[index].addGrad(Tensor::full(parameters[index].shape(), 3.0f));
    reducer.onGradReady(index);
  }
  reducer.finish();  // returns at once for priority plans
  gate.unlock();
  reducer.waitForParameter(0);
  for (float value : parameters[0].grad().toVector()) EXPECT_FLOAT_EQ(value, 3.0f);
  reducer.waitAll();
  // Flat layout: p2 at 0, p1 at 4, p0 at 8.
  const std::vector<Launch> expected = {{8, 2}, {10, 2}, {4, 2}, {6, 2}, {0, 2}, {2, 2}};
  EXPECT_EQ(communicator.launches(), expected);
  EXPECT_GE(communicator.negotiations(), 6u);
}

TEST(Reducer, AParameterWithoutAGradientIsNamed) {
  auto parameters = makeParameters({5, 3, 8});
  RecordingCommunicator communicator(2);
  Reducer reducer(parameters, communicator);
  reducer.setPlan(fifoPlan(parameters, reversed(3), {1, 2}), reversed(3));
  reducer.prepareForBackward(0);
  parameters[2].addGrad(Tensor::full({8}, 1.0f));
  reducer.onGradReady(2);
  const std::string message = testing::errorMessage([&] { reducer.finish(); });
  testing::expectContains(message, "2 parameter(s) received no gradient in step 0");
  testing::expectContains(message, "'p1', 'p0'");
}

TEST(Reducer, AGradientReadyTwiceInOneStepIsRefused) {
  auto parameters = makeParameters({5});
  RecordingCommunicator communicator(2);
  Reducer reducer(parameters, communicator);
  reducer.setPlan(fifoPlan(parameters, reversed(1), {1}), reversed(1));
  reducer.prepareForBackward(0);
  parameters[0].addGrad(Tensor::full({5}, 1.0f));
  reducer.onGradReady(0);
  testing::expectContains(testing::errorMessage([&] { reducer.onGradReady(0); }),
                          "'p0' became final twice");
  reducer.finish();
}

TEST(Reducer, RefusesAPlanThatIsNotAPermutation) {
  auto parameters = makeParameters({5, 3});
  RecordingCommunicator communicator(2);
  Reducer reducer(parameters, communicator);
  testing::expectContains(
      testing::errorMessage([&] {
        reducer.setPlan(fifoPlan(parameters, reversed(2), {2}), std::vector<size_t>{1, 1});
      }),
      "not a permutation");
}

TEST(Reducer, GradientsAreViewsOfTheFlatBuffer) {
  // A parameter's first gradient contribution lands inside the flat buffer, so the bucket's
  // all-reduce needs no copy, and the averaged values are what the parameter's grad() reads.
  auto parameters = makeParameters({3, 3});
  RecordingCommunicator communicator(2);
  Reducer reducer(parameters, communicator);
  reducer.setPlan(fifoPlan(parameters, reversed(2), {1, 1}), reversed(2));
  communicator.setBase(reducer.flatGradients().data<float>());
  reducer.prepareForBackward(0);
  parameters[0].addGrad(Tensor::full({3}, 2.0f));
  reducer.onGradReady(0);
  parameters[1].addGrad(Tensor::full({3}, 4.0f));
  reducer.onGradReady(1);
  reducer.finish();
  // Backward order p1, p0: the flat buffer holds p1's averaged gradient, then p0's.
  EXPECT_EQ(reducer.flatGradients().toVector(), (std::vector<float>{4, 4, 4, 2, 2, 2}));
  EXPECT_TRUE(parameters[0].grad().sharesStorageWith(reducer.flatGradients()));
}

}  // namespace
}  // namespace imerge::distributed
