// The Reducer's path for gradients on a GPU, on the CPU: parameters on a host-backed device that
// calls itself CUDA (support/fake_device.h), a fake DeviceCommunicator that records what it is
// asked to do and completes collectives only when the test says so, and fake DeviceStepEvents
// that log each mark and answer made-up device times. Checked: each bucket's collective is
// handed the ready event recorded when that bucket became ready, in plan order whatever the
// hook order; finish() joins the compute stream to the last collective and returns without
// waiting for any; a collective that fails later surfaces at the next step; waitAll() waits for
// all; ready times come from the device marks of profiled steps only; `priority` among several
// ranks, a host-only communicator among several ranks, a communicator of another GPU and
// parameters on two devices are refused, naming the cause; an imerge-overlap plan launches each
// bucket's halves in the simulator's order, and only the compute stream waits for them.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <future>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "distributed/runtime/reducer.h"
#include "support/error_text.h"
#include "support/fake_device.h"
#include "support/plan_builders.h"

namespace imerge::distributed {
namespace {

using namespace std::chrono_literals;
using testing::fifoPlan;
using testing::reversed;

// What happened, in order, across the fake events and the fake communicator.
struct Log {
  std::mutex mutex;
  std::vector<std::string> lines;
  void add(std::string line) {
    std::lock_guard lock(mutex);
    lines.push_back(std::move(line));
  }
  size_t indexOf(const std::string& line) {
    std::lock_guard lock(mutex);
    auto found = std::find(lines.begin(), lines.end(), line);
    return found == lines.end() ? SIZE_MAX : static_cast<size_t>(found - lines.begin());
  }
};

// Events are tags: the address of a slot, one per (kind, bucket).
class FakeEvents final : public DeviceStepEvents {
 public:
  FakeEvents(Device& device, Log& log) : device_(device), log_(log) {}

  Device& device() const override { return device_; }
  CUstream_st* computeStream() const override {
    return reinterpret_cast<CUstream_st*>(const_cast<char*>(&computeStreamTag_));
  }
  void reserve(size_t parameters, size_t buckets) override {
    parameters_ = std::max(parameters_, parameters);
    if (buckets > tags_.size()) tags_.resize(buckets);
  }
  void beginStep() override {
    recorded_.clear();
    log_.add("begin step");
  }
  bool recorded(StepMark mark, size_t index) const override {
    return recorded_.count({mark, index}) > 0;
  }
  void mark(StepMark mark, size_t index) override {
    ASSERT_TRUE(mark != StepMark::GradReady || index < parameters_);
    recorded_.insert({mark, index});
    std::string line = stepMarkName(mark);  // appended: GCC 12 warns falsely on a sum here
    if (mark == StepMark::GradReady) line.append(" ").append(std::to_string(index));
    log_.add(std::move(line));
  }
  DeviceSync bucketReady(size_t bucket) override {
    recorded_.insert({StepMark::BucketStart, bucket});
    recorded_.insert({StepMark::BucketEnd, bucket});
    log_.add("ready " + std::to_string(bucket));
    return syncOf(bucket);
  }
  std::optional<double> secondsFromBackwardStart(StepMark mark, size_t index) override {
    if (!recorded(mark, index)) return std::nullopt;
    auto found = times.find({mark, index});
    return found == times.end() ? 0.0 : found->second;
  }

  DeviceSync syncOf(size_t bucket) {
    Tags& tags = tags_.at(bucket);
    return {reinterpret_cast<CUevent_st*>(&tags.ready), reinterpret_cast<CUevent_st*>(&tags.start),
            reinterpret_cast<CUevent_st*>(&tags.end)};
  }

  // Device times the test makes up, seconds from backward start.
  std::map<std::pair<StepMark, size_t>, double> times;

 private:
  struct Tags {
    char ready = 0, start = 0, end = 0;
  };
  Device& device_;
  Log& log_;
  char computeStreamTag_ = 0;
  size_t parameters_ = 0;
  std::deque<Tags> tags_;  // stable addresses
  std::set<std::pair<StepMark, size_t>> recorded_;
};

// A device communicator of `size` ranks whose collectives complete when the test says so.
class FakeDeviceCommunicator final : public DeviceCommunicator {
 public:
  FakeDeviceCommunicator(Device& device, int size, Log& log)
      : device_(device), size_(size), log_(log) {}

  struct Launch {
    CollectiveKind kind;
    int64_t firstElement;
    int64_t elements;
    DeviceSync sync;
    WorkHandle work;
  };

  int rank() const override { return 0; }
  int size() const override { return size_; }
  std::string backendName() const override { return "fake-device"; }
  Device& bufferDevice() const override { return device_; }
  WorkHandle submit(std::string label, CommTask) override {
    auto work = std::make_shared<Work>(std::move(label));
    work->markFinished(nullptr);
    return work;
  }
  WorkHandle collectiveAsync(CollectiveKind kind, float* data, size_t count, const DeviceSync& sync,
                             std::string label) override {
    auto work = std::make_shared<Work>(std::move(label));
    work->markStarted();
    std::lock_guard lock(mutex_);
    launches_.push_back({kind, data - base_, static_cast<int64_t>(count), sync, work});
    log_.add("launch " + std::to_string(launches_.size() - 1));
    return work;
  }
  void waitOnStream(const WorkHandle& work, CUstream_st* stream) override {
    std::lock_guard lock(mutex_);
    for (size_t i = 0; i < launches_.size(); ++i) {
      if (launches_[i].work == work) {
        joinedStream = stream;
        log_.add("join " + std::to_string(i));
        return;
      }
    }
    log_.add("join of an unknown work");
  }
  AllreduceTimer collectiveTimer(size_t maxBytes, CollectiveKind kind) override {
    return hostCollectiveTimer(maxBytes, kind);
  }
  [[noreturn]] void abort(int) override { std::abort(); }
  void shutdown() override {}

  void setBase(const float* base) { base_ = base; }
  std::vector<Launch> launches() {
    std::lock_guard lock(mutex_);
    return launches_;
  }
  void complete(size_t launch, std::exception_ptr error = nullptr) {
    launches().at(launch).work->markFinished(error);
  }
  void completeAll() {
    for (const Launch& launch : launches()) {
      if (!launch.work->completed()) launch.work->markFinished(nullptr);
    }
  }

  CUstream_st* joinedStream = nullptr;

 private:
  Device& device_;
  int size_;
  Log& log_;
  std::mutex mutex_;
  const float* base_ = nullptr;
  std::vector<Launch> launches_;
};

testing::HostBackedDevice& fakeGpu() {
  static testing::HostBackedDevice device(DeviceType::CUDA, "fake-cuda:0");
  return device;
}

// Parameters on the fake GPU unless another device is named.
std::vector<autograd::Variable> makeParameters(const std::vector<int64_t>& sizes,
                                               Device& device = fakeGpu()) {
  return testing::makeParameters(sizes, device);
}

// A gradient for a parameter on the fake GPU: made on the host, copied over (no kernel runs).
void giveGradient(autograd::Variable& parameter, float value) {
  parameter.addGrad(Tensor::full(parameter.shape(), value).to(fakeGpu()));
}

// The pieces of one test: log, fakes, parameters, reducer.
struct Fixture {
  explicit Fixture(std::vector<int64_t> sizes, int ranks = 2)
      : communicator(fakeGpu(), ranks, log), parameters(makeParameters(sizes)) {
    auto owned = std::make_unique<FakeEvents>(fakeGpu(), log);
    events = owned.get();
    reducer = std::make_unique<Reducer>(parameters, communicator, std::vector<std::string>{},
                                        std::move(owned));
  }
  void install(const Plan& plan) {
    reducer->setPlan(plan, reversed(parameters.size()));
    communicator.setBase(reducer->flatGradients().data<float>());
  }
  void backward(const std::vector<size_t>& hookOrder, int64_t step, bool profile = true) {
    reducer->prepareForBackward(step, profile);
    for (size_t index : hookOrder) {
      giveGradient(parameters[index], static_cast<float>(index + 1));
      reducer->onGradReady(index);
    }
  }
  // finish() on another thread, so that a finish() that waited for the collectives fails the
  // test instead of hanging it.
  bool finishReturnsWithoutWaiting() {
    auto done = std::async(std::launch::async, [this] { reducer->finish(); });
    if (done.wait_for(5s) == std::future_status::ready) {
      done.get();
      return true;
    }
    communicator.completeAll();  // let it return
    done.get();
    return false;
  }
  ~Fixture() { communicator.completeAll(); }  // a failed test must not hang in waitAll()
  void clearGradients() {
    for (autograd::Variable& parameter : parameters) parameter.zeroGrad();
  }

  Log log;
  FakeDeviceCommunicator communicator;
  std::vector<autograd::Variable> parameters;
  FakeEvents* events = nullptr;
  std::unique_ptr<Reducer> reducer;
};

TEST(ReducerOnDevice, EachCollectiveWaitsForItsBucketsReadyEventInPlanOrder) {
  std::mt19937 random(3);
  for (int trial = 0; trial < 10; ++trial) {
    Fixture f({5, 3, 8, 2, 7, 4});
    const Plan plan = fifoPlan(f.parameters, reversed(6), {2, 1, 3});
    f.install(plan);
    EXPECT_EQ(&f.reducer->flatGradients().device(), &fakeGpu());
    std::vector<size_t> hookOrder = {5, 4, 3, 2, 1, 0};
    if (trial > 0) std::shuffle(hookOrder.begin(), hookOrder.end(), random);
    f.backward(hookOrder, 0);
    ASSERT_TRUE(f.finishReturnsWithoutWaiting());
    const auto launches = f.communicator.launches();
    // Flat layout in backward order: p5 (4), p4 (7) | p3 (2) | p2 (8), p1 (3), p0 (5).
    ASSERT_EQ(launches.size(), 3u);
    const std::vector<std::pair<int64_t, int64_t>> expected = {{0, 11}, {11, 2}, {13, 16}};
    for (size_t b = 0; b < 3; ++b) {
      EXPECT_EQ(launches[b].firstElement, expected[b].first) << "bucket " << b;
      EXPECT_EQ(launches[b].elements, expected[b].second) << "bucket " << b;
      const DeviceSync sync = f.events->syncOf(b);
      EXPECT_EQ(launches[b].sync.ready, sync.ready) << "bucket " << b;
      EXPECT_EQ(launches[b].sync.started, sync.started) << "bucket " << b;
      EXPECT_EQ(launches[b].sync.finished, sync.finished) << "bucket " << b;
      const std::string bucket = std::to_string(b);
      EXPECT_LT(f.log.indexOf("ready " + bucket), f.log.indexOf("launch " + bucket));
      if (b > 0) {
        EXPECT_LT(f.log.indexOf("launch " + std::to_string(b - 1)),
                  f.log.indexOf("launch " + bucket));
      }
    }
    f.communicator.completeAll();
    f.reducer->waitAll();
  }
}

TEST(ReducerOnDevice, FinishJoinsTheComputeStreamToTheLastCollectiveWithoutWaiting) {
  Fixture f({5, 3, 8});
  f.install(fifoPlan(f.parameters, reversed(3), {1, 1, 1}));
  f.backward({2, 1, 0}, 0);
  ASSERT_TRUE(f.finishReturnsWithoutWaiting()) << "finish() waited on the host";
  for (const auto& launch : f.communicator.launches()) EXPECT_FALSE(launch.work->completed());
  EXPECT_EQ(f.communicator.joinedStream, f.events->computeStream());
  EXPECT_NE(f.log.indexOf("join 2"), SIZE_MAX) << "the compute stream must wait for the last";
  EXPECT_LT(f.log.indexOf("backward end"), f.log.indexOf("join 2"));
  // The next step may begin while they are in flight: the compute stream orders it.
  f.clearGradients();
  f.backward({2, 1, 0}, 1);
  ASSERT_TRUE(f.finishReturnsWithoutWaiting());
  EXPECT_EQ(f.communicator.launches().size(), 6u);
  f.communicator.completeAll();
  f.reducer->waitAll();
}

TEST(ReducerOnDevice, AStartAfterBackwardPlanLaunchesEverythingInFinish) {
  Fixture f({5, 3, 8});
  Plan plan = fifoPlan(f.parameters, reversed(3), {1, 2});
  plan.startAfterBackward = true;
  f.install(plan);
  f.backward({2, 1, 0}, 0);
  EXPECT_TRUE(f.communicator.launches().empty());
  ASSERT_TRUE(f.finishReturnsWithoutWaiting());
  EXPECT_EQ(f.communicator.launches().size(), 2u);
  EXPECT_LT(f.log.indexOf("ready 1"), f.log.indexOf("launch 0"));
  f.communicator.completeAll();
  f.reducer->waitAll();
}

TEST(ReducerOnDevice, ACollectiveThatFailsLaterSurfacesAtTheNextStep) {
  Fixture f({5, 3});
  f.install(fifoPlan(f.parameters, reversed(2), {1, 1}));
  f.backward({1, 0}, 0);
  ASSERT_TRUE(f.finishReturnsWithoutWaiting());
  f.communicator.complete(0);
  f.communicator.complete(1, std::make_exception_ptr(Error("NCCL reported a remote error")));
  f.clearGradients();
  testing::expectContains(testing::errorMessage([&] { f.reducer->prepareForBackward(1); }),
                          "NCCL reported a remote error");
}

TEST(ReducerOnDevice, WaitAllWaitsForEveryCollectiveInFlight) {
  Fixture f({5, 3, 8});
  f.install(fifoPlan(f.parameters, reversed(3), {1, 1, 1}));
  f.backward({2, 1, 0}, 0);
  ASSERT_TRUE(f.finishReturnsWithoutWaiting());
  std::thread completer([&] {
    std::this_thread::sleep_for(50ms);
    f.communicator.completeAll();
  });
  f.reducer->waitAll();
  for (const auto& launch : f.communicator.launches()) EXPECT_TRUE(launch.work->completed());
  completer.join();
  // With nothing in flight a new plan may be installed.
  f.install(fifoPlan(f.parameters, reversed(3), {3}));
}

TEST(ReducerOnDevice, ReadyTimesComeFromTheDeviceAndOnlyInProfiledSteps) {
  Fixture f({5, 3, 8});
  f.install(fifoPlan(f.parameters, reversed(3), {1, 1, 1}));
  // Backward order p2, p1, p0: the device computes them at 1, 3 and 6 ms after backward start.
  f.events->times[{StepMark::GradReady, 2}] = 1e-3;
  f.events->times[{StepMark::GradReady, 1}] = 3e-3;
  f.events->times[{StepMark::GradReady, 0}] = 6e-3;
  f.backward({2, 1, 0}, 0, /*profile=*/true);
  ASSERT_TRUE(f.finishReturnsWithoutWaiting());
  ASSERT_TRUE(f.reducer->collectReadySeconds());
  EXPECT_EQ(f.reducer->lastReadySeconds(), (std::vector<double>{6e-3, 3e-3, 1e-3}));
  const std::vector<TensorInfo> infos = f.reducer->tensorInfos();
  ASSERT_EQ(infos.size(), 3u);
  EXPECT_NEAR(infos[0].backwardSeconds, 1e-3, 1e-12);
  EXPECT_NEAR(infos[1].backwardSeconds, 2e-3, 1e-12);
  EXPECT_NEAR(infos[2].backwardSeconds, 3e-3, 1e-12);
  f.communicator.completeAll();

  f.clearGradients();
  f.backward({2, 1, 0}, 1, /*profile=*/false);
  ASSERT_TRUE(f.finishReturnsWithoutWaiting());
  EXPECT_FALSE(f.reducer->collectReadySeconds());
  EXPECT_FALSE(f.events->recorded(StepMark::GradReady, 0)) << "no event per hook when not asked";
  f.communicator.completeAll();
  f.reducer->waitAll();
}

TEST(ReducerOnDevice, DeviceStepTimesListTheLaunchedCollectives) {
  Fixture f({5, 3});
  f.install(fifoPlan(f.parameters, reversed(2), {1, 1}));
  f.reducer->markForwardStart();
  f.events->times[{StepMark::ForwardStart, 0}] = -4e-3;
  f.events->times[{StepMark::BackwardEnd, 0}] = 5e-3;
  f.events->times[{StepMark::BucketStart, 0}] = 2e-3;
  f.events->times[{StepMark::BucketEnd, 0}] = 4e-3;
  f.events->times[{StepMark::BucketStart, 1}] = 5e-3;
  f.events->times[{StepMark::BucketEnd, 1}] = 7e-3;
  f.events->times[{StepMark::StepEnd, 0}] = 8e-3;
  f.backward({1, 0}, 0);
  ASSERT_TRUE(f.finishReturnsWithoutWaiting());
  f.reducer->markStepEnd();
  const DeviceStepTimes times = f.reducer->readDeviceStepTimes();
  EXPECT_EQ(times.forwardStart, -4e-3);
  EXPECT_EQ(times.backwardEnd, 5e-3);
  EXPECT_EQ(times.stepEnd, 8e-3);
  ASSERT_EQ(times.buckets.size(), 2u);
  EXPECT_EQ(times.buckets[0].bucket, 0u);
  EXPECT_EQ(times.buckets[0].bytes, 12u);  // p1: 3 floats
  EXPECT_EQ(times.buckets[1].start, 5e-3);
  EXPECT_EQ(times.buckets[1].end, 7e-3);
  // One step's marks: markForwardStart began it, so prepareForBackward did not begin another.
  EXPECT_EQ(std::count(f.log.lines.begin(), f.log.lines.end(), "begin step"), 1);
  f.communicator.completeAll();
  f.reducer->waitAll();
}

// imerge-overlap on a GPU: b0 all-reduced in backward, b1 and b3 split, b2 deferred.
TEST(ReducerOnDevice, AForwardPhasePlanRunsItsHalvesOnTheDeviceWithoutHostWaits) {
  using Schedule = Bucket::Schedule;
  Fixture f({5, 3, 8, 2});
  Plan plan = fifoPlan(f.parameters, reversed(4), {1, 1, 1, 1});
  plan.overlapWithNextForward = true;
  const Schedule schedules[] = {Schedule::Backward, Schedule::Split, Schedule::BeforeForward,
                                Schedule::Split};
  for (size_t b = 0; b < 4; ++b) plan.buckets[b].schedule = schedules[b];
  f.install(plan);
  // Flat layout in backward order: p3 (2) | p2 (8) | p1 (3) | p0 (5).
  const int64_t firstElementOf[] = {0, 2, 10, 13};
  f.backward({3, 2, 1, 0}, 0);
  ASSERT_TRUE(f.finishReturnsWithoutWaiting()) << "finish() waited on the host";
  // Backward's parts in bucket order, then the forward phase from the last bucket to the first.
  const std::vector<std::pair<size_t, CollectiveKind>> expected = {
      {0, CollectiveKind::AllReduce},     {1, CollectiveKind::ReduceScatter},
      {3, CollectiveKind::ReduceScatter}, {3, CollectiveKind::AllGather},
      {2, CollectiveKind::AllReduce},     {1, CollectiveKind::AllGather}};
  const auto launches = f.communicator.launches();
  ASSERT_EQ(launches.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    const auto [bucket, kind] = expected[i];
    EXPECT_EQ(launches[i].kind, kind) << "launch " << i;
    EXPECT_EQ(launches[i].firstElement, firstElementOf[bucket]) << "launch " << i;
    const DeviceSync sync = f.events->syncOf(bucket);
    EXPECT_EQ(launches[i].sync.ready, sync.ready) << "launch " << i;
    // The bucket's timing marks go to its collective in backward only.
    const bool inBackward = i < 3;
    EXPECT_EQ(launches[i].sync.started, inBackward ? sync.started : nullptr) << "launch " << i;
    EXPECT_EQ(launches[i].sync.finished, inBackward ? sync.finished : nullptr) << "launch " << i;
  }
  EXPECT_EQ(f.communicator.joinedStream, nullptr) << "the compute stream joined at backward end";
  const DeviceStepTimes times = f.reducer->readDeviceStepTimes();
  EXPECT_FALSE(times.joinedAtBackwardEnd);
  ASSERT_EQ(times.buckets.size(), 3u);
  EXPECT_EQ(times.buckets[2].bucket, 3u);

  // The next forward: p1's update waits, on the compute stream, for b2's deferred all-reduce
  // (launch 4), p2's for b1's all-gather (launch 5); the host waits for neither.
  f.reducer->waitForParameter(1);
  EXPECT_EQ(f.communicator.joinedStream, f.events->computeStream());
  EXPECT_NE(f.log.indexOf("join 4"), SIZE_MAX);
  f.reducer->waitForParameter(2);
  EXPECT_NE(f.log.indexOf("join 5"), SIZE_MAX);
  for (const auto& launch : f.communicator.launches()) EXPECT_FALSE(launch.work->completed());
  // The next backward's stream waits for the last collective launched, again on the device.
  const size_t joinsBefore = std::count(f.log.lines.begin(), f.log.lines.end(), "join 5");
  f.clearGradients();
  f.backward({3, 2, 1, 0}, 1);
  EXPECT_EQ(std::count(f.log.lines.begin(), f.log.lines.end(), "join 5"), joinsBefore + 1);
  ASSERT_TRUE(f.finishReturnsWithoutWaiting());
  EXPECT_EQ(f.communicator.launches().size(), 2 * expected.size());
  f.communicator.completeAll();
  f.reducer->waitAll();
}

TEST(ReducerOnDevice, PriorityAmongSeveralRanksIsRefusedAndRunsInAWorldOfOne) {
  for (int ranks : {2, 1}) {
    Fixture f({4, 4}, ranks);
    Plan plan;
    plan.order = LaunchOrder::Priority;
    plan.overlapWithNextForward = true;
    for (size_t position = 0; position < 2; ++position) {
      plan.buckets.push_back({{position}, 16, static_cast<int>(1 - position), 0});
    }
    if (ranks > 1) {
      const std::string message = testing::errorMessage([&] { f.install(plan); });
      testing::expectContains(message,
                              "'priority' strategy cannot reduce gradients on fake-cuda:0");
      testing::expectContains(message, "among 2 ranks");
      testing::expectContains(message, "Use --dist mgwfbp, imerge, ddp, fusion or wfbp");
      continue;
    }
    f.install(plan);
    f.backward({1, 0}, 0);
    ASSERT_TRUE(f.finishReturnsWithoutWaiting());
    EXPECT_EQ(f.communicator.launches().size(), 2u);
    f.communicator.completeAll();
    f.reducer->waitAll();
  }
}

TEST(ReducerOnDevice, AHostCommunicatorServesOnlyAWorldOfOne) {
  Log log;
  {
    // Several ranks: refused, naming the way out.
    class TwoRanks final : public Communicator {
     public:
      int rank() const override { return 0; }
      int size() const override { return 2; }
      std::string backendName() const override { return "mpi"; }
      WorkHandle submit(std::string label, CommTask) override {
        return std::make_shared<Work>(std::move(label));
      }
      [[noreturn]] void abort(int) override { std::abort(); }
      void shutdown() override {}
    } host;
    const std::string message = testing::errorMessage([&] {
      Reducer reducer(makeParameters({3}), host, {}, std::make_unique<FakeEvents>(fakeGpu(), log));
    });
    testing::expectContains(message,
                            "the parameters are on fake-cuda:0 but the 'mpi' communicator");
    testing::expectContains(message, "--dist-backend nccl");
  }
  // A world of one: nothing to exchange, every launch complete at once.
  SingleProcessCommunicator single;
  auto parameters = makeParameters({5, 3});
  Reducer reducer(parameters, single, {}, std::make_unique<FakeEvents>(fakeGpu(), log));
  reducer.setPlan(fifoPlan(parameters, reversed(2), {1, 1}), reversed(2));
  reducer.prepareForBackward(0);
  for (size_t index : {1, 0}) {
    giveGradient(parameters[index], 2.0f);
    reducer.onGradReady(index);
  }
  reducer.finish();
  EXPECT_EQ(parameters[0].grad().toVector(), std::vector<float>(5, 2.0f));
  EXPECT_TRUE(reducer.readDeviceStepTimes().buckets.empty());
  reducer.waitAll();
}

TEST(ReducerOnDevice, ACommunicatorOfAnotherGpuIsRefused) {
  Log log;
  testing::HostBackedDevice otherGpu(DeviceType::CUDA, "fake-cuda:1");
  FakeDeviceCommunicator communicator(otherGpu, 2, log);
  const std::string message = testing::errorMessage([&] {
    Reducer reducer(makeParameters({3}), communicator, {},
                    std::make_unique<FakeEvents>(fakeGpu(), log));
  });
  testing::expectContains(message,
                          "the parameters are on fake-cuda:0 but the 'fake-device' "
                          "communicator of rank 0 reduces buffers on fake-cuda:1");
}

TEST(ReducerOnDevice, ParametersOnTwoDevicesAreRefused) {
  Log log;
  FakeDeviceCommunicator communicator(fakeGpu(), 2, log);
  std::vector<autograd::Variable> parameters = makeParameters({3});
  std::vector<autograd::Variable> onHost = makeParameters({4}, cpuDevice());
  onHost[0].setName("bias");
  parameters.push_back(onHost[0]);
  const std::string message = testing::errorMessage([&] {
    Reducer reducer(parameters, communicator, {}, std::make_unique<FakeEvents>(fakeGpu(), log));
  });
  testing::expectContains(message, "parameter 'bias' is on cpu but 'p0' is on fake-cuda:0");
}

}  // namespace
}  // namespace imerge::distributed
