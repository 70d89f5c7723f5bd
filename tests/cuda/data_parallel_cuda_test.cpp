// DataParallel over a model on cuda:0 in a world of one, against plain training on cuda:0: for
// every strategy and every way gradients can travel (NCCL with one rank, the MPI staging backend
// over a world of one, no device communicator at all), 4 steps give the same parameters. Also:
// the gradients are views of a flat buffer on the GPU, the breakdown holds device figures, and
// the compute profile holds device backward times; the start-up measurement times the backend's
// device all-reduces. Needs a GPU (label "gpu"): each test skips,
// saying why, where there is none. The multi-rank runs are
// tests/distributed/runtime/data_parallel_gpu_mpitest.cpp.
//
// The model is an MLP (Linear, ReLU, softmax cross-entropy, SGD): the ops with CUDA kernels.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <vector>

#include "autograd/ops/loss.h"
#include "core/cuda/cuda_device.h"
#include "distributed/comm/device_communicator.h"
#include "distributed/runtime/comm_measurement.h"
#include "distributed/runtime/data_parallel.h"
#include "layers/layers.h"
#include "support/compare.h"
#include "support/gpu_test.h"
#include "support/parameter_values.h"

namespace imerge::distributed {
namespace {

constexpr int64_t kSteps = 4;
constexpr int64_t kBatch = 8;

// linear(24 -> 32) ReLU linear(32 -> 16) ReLU linear(16 -> 10), on `device`.
std::shared_ptr<layers::Sequential> makeModel(Device& device) {
  Generator generator(7);
  auto net = std::make_shared<layers::Sequential>();
  net->add(std::make_shared<layers::Linear>(24, 32, true, generator));
  net->add(std::make_shared<layers::ReLU>());
  net->add(std::make_shared<layers::Linear>(32, 16, true, generator));
  net->add(std::make_shared<layers::ReLU>());
  net->add(std::make_shared<layers::Linear>(16, 10, true, generator));
  net->to(device);
  return net;
}

optim::SgdOptions sgdOptions() {
  return {.learningRate = 0.1f, .momentum = 0.9f, .weightDecay = 1e-4f};
}

std::pair<Tensor, Tensor> batch(int64_t step, Device& device) {
  Generator generator(100 + step);
  Tensor images = Tensor::empty({kBatch, 24});
  generator.fillNormal(images, 0.0f, 1.0f);
  std::vector<int64_t> labels(kBatch);
  for (auto& label : labels) label = static_cast<int64_t>(generator.nextInt(10));
  return {images.to(device), Tensor::fromVector(labels, {kBatch}).to(device)};
}

std::vector<std::vector<float>> trainPlain(CudaDevice& gpu) {
  auto model = makeModel(gpu);
  optim::Sgd optimizer(model->parameters(), sgdOptions());
  for (int64_t step = 0; step < kSteps; ++step) {
    auto [images, labels] = batch(step, gpu);
    optimizer.zeroGrad();
    autograd::softmaxCrossEntropy(model->forward(autograd::Variable(images)), labels).backward();
    optimizer.step();
  }
  return testing::parameterValues(*model);
}

DataParallelOptions optionsFor(const std::string& strategy) {
  DataParallelOptions options;
  options.strategy = strategy;
  options.planner.fusionBytes = 1024;  // several buckets even for this small model
  options.planner.sliceElements = 100;
  // A measured-looking model, so the start-up measurement is skipped for mgwfbp and imerge.
  for (size_t bytes = 4; bytes <= (size_t{1} << 20); bytes *= 4) {
    options.commSamples.push_back({bytes, 1, bytes < 8192 ? 20e-6 : 30e-6 + bytes / 1e11});
  }
  options.warmupSteps = 2;
  options.replanEverySteps = 1;  // a drift check after every step past the warm-up
  return options;
}

// |got - want| <= 1e-6 of each tensor's largest magnitude (the same kernels on the same data:
// the difference, if any, is the order of a sum).
void expectSameParameters(const std::vector<std::vector<float>>& got,
                          const std::vector<std::vector<float>>& want, const std::string& what) {
  EXPECT_TRUE(testing::parametersCloseToScale(got, want, 1e-6, what));
}

// A device communicator that forwards everything to `inner` and records the sizes its
// all-reduce timer was asked for and timed: what the start-up measurement went through.
class TimerRecordingCommunicator : public DeviceCommunicator {
 public:
  explicit TimerRecordingCommunicator(DeviceCommunicator& inner) : inner_(inner) {}

  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  std::string backendName() const override { return inner_.backendName(); }
  WorkHandle submit(std::string label, CommTask task) override {
    return inner_.submit(std::move(label), std::move(task));
  }
  WorkHandle allreduceSumAsync(float* data, size_t count, std::string label) override {
    return inner_.allreduceSumAsync(data, count, std::move(label));
  }
  [[noreturn]] void abort(int exitCode) override {
    inner_.abort(exitCode);
    std::abort();  // not reached: the compiler cannot see that a virtual call does not return
  }
  void shutdown() override {}  // the test shuts `inner` down
  Device& bufferDevice() const override { return inner_.bufferDevice(); }
  WorkHandle collectiveAsync(CollectiveKind kind, float* data, size_t count, const DeviceSync& sync,
                             std::string label) override {
    return inner_.collectiveAsync(kind, data, count, sync, std::move(label));
  }
  void waitOnStream(const WorkHandle& work, CUstream_st* stream) override {
    inner_.waitOnStream(work, stream);
  }
  AllreduceTimer collectiveTimer(size_t maxBytes, CollectiveKind kind) override {
    if (kind != CollectiveKind::AllReduce) return inner_.collectiveTimer(maxBytes, kind);
    timerMaxBytes.push_back(maxBytes);
    return [this, timer = inner_.collectiveTimer(maxBytes, kind)](CollectiveOps& ops, size_t bytes,
                                                                  int count) {
      timedBytes.push_back(bytes);  // on the communication thread, read after it is done
      return timer(ops, bytes, count);
    };
  }

  std::vector<size_t> timerMaxBytes;
  std::vector<size_t> timedBytes;

 private:
  DeviceCommunicator& inner_;
};

enum class Backend { Nccl, Staging, None };

std::string nameOf(Backend backend) {
  return backend == Backend::Nccl ? "nccl" : backend == Backend::Staging ? "mpi-staged" : "none";
}

TEST(DataParallelOnGpu, MatchesPlainTrainingForEveryStrategyAndBackend) {
  SKIP_WITHOUT_GPU();
  CudaDevice& gpu = cudaDevice(0);
  const std::vector<std::vector<float>> plain = trainPlain(gpu);
  for (Backend backend : {Backend::Nccl, Backend::Staging, Backend::None}) {
    for (const std::string& strategy : strategyNames()) {
      const std::string what = strategy + " over " + nameOf(backend);
      SingleProcessCommunicator host;
      std::unique_ptr<DeviceCommunicator> device;
      if (backend == Backend::Nccl) device = makeNcclCommunicator(host, 0, 60.0);
      if (backend == Backend::Staging) device = makeStagingCommunicator(host, 0);
      Communicator& communicator = device ? static_cast<Communicator&>(*device) : host;
      if (device) {
        EXPECT_EQ(communicator.backendName(), nameOf(backend));
      }
      {
        auto model = makeModel(gpu);
        optim::Sgd optimizer(model->parameters(), sgdOptions());
        DataParallel parallel(model, communicator, optionsFor(strategy));
        for (int64_t step = 0; step < kSteps; ++step) {
          auto [images, labels] = batch(step, gpu);
          parallel.backward(
              autograd::softmaxCrossEntropy(parallel.forward(autograd::Variable(images)), labels));
          if (step == 0) {
            // The gradients are views of one flat buffer on the GPU.
            const auto parameters = model->parameters();
            for (const autograd::Variable& parameter : parameters) {
              EXPECT_EQ(&parameter.grad().device(), &gpu) << what;
              EXPECT_TRUE(parameter.grad().sharesStorageWith(parameters.front().grad())) << what;
            }
          }
          parallel.step(optimizer);
        }
        parallel.synchronize();
        expectSameParameters(testing::parameterValues(*model), plain, what);
        EXPECT_GE(parallel.plansBuilt(), 2) << what;

        const std::vector<StepBreakdown> breakdowns = parallel.takeBreakdowns();
        EXPECT_EQ(breakdowns.size(), static_cast<size_t>(kSteps)) << what;
        for (const StepBreakdown& b : breakdowns) {
          EXPECT_GT(b.iterationSeconds, 0.0) << what;
          EXPECT_GE(b.computeSeconds, 0.0) << what;
          EXPECT_GE(b.waitingSeconds, 0.0) << what;
          EXPECT_LE(b.overlappedSeconds, b.communicationSeconds + 1e-9) << what;
          if (device) {
            EXPECT_GT(b.communicationSeconds, 0.0) << what << ": device-timed buckets";
          }
        }
        // Device backward times from the hooks' events: non-negative, and not all zero.
        const ComputeProfile profile = parallel.computeProfile();
        EXPECT_EQ(profile.tensors.size(), model->parameters().size()) << what;
        double backward = 0;
        for (const TensorInfo& tensor : profile.tensors) {
          EXPECT_GE(tensor.backwardSeconds, 0.0) << what << ": " << tensor.name;
          backward += tensor.backwardSeconds;
        }
        EXPECT_GT(backward, 0.0) << what;
      }
      if (device) device->shutdown();
    }
  }
}

TEST(DataParallelOnGpu, TheStartUpMeasurementTimesTheBackendsDeviceAllReduces) {
  SKIP_WITHOUT_GPU();
  CudaDevice& gpu = cudaDevice(0);
  for (Backend backend : {Backend::Nccl, Backend::Staging}) {
    SingleProcessCommunicator host;
    std::unique_ptr<DeviceCommunicator> device = backend == Backend::Nccl
                                                     ? makeNcclCommunicator(host, 0, 60.0)
                                                     : makeStagingCommunicator(host, 0);
    const std::vector<size_t> sizes = {4, 4096, size_t{1} << 20};
    const std::vector<CommSample> samples = measureAllreduce(
        *device, sizes, 3, device->collectiveTimer(sizes.back(), CollectiveKind::AllReduce));
    ASSERT_EQ(samples.size(), sizes.size()) << nameOf(backend);
    for (const CommSample& sample : samples) {
      EXPECT_GT(sample.seconds, 0.0) << nameOf(backend) << ", " << sample.bytes << " bytes";
      EXPECT_LT(sample.seconds, 1.0) << nameOf(backend) << ", " << sample.bytes << " bytes";
    }
    {
      // imerge without a communication model measures one at start-up, through the device's
      // timer, at every start-up size, and plans with what it measured.
      DataParallelOptions options = optionsFor("imerge");
      options.commSamples.clear();
      auto model = makeModel(gpu);
      optim::Sgd optimizer(model->parameters(), sgdOptions());
      TimerRecordingCommunicator recording(*device);
      DataParallel parallel(model, recording, options);
      const std::vector<size_t> startup = startupMeasurementSizes();
      EXPECT_EQ(recording.timerMaxBytes,
                std::vector<size_t>{*std::max_element(startup.begin(), startup.end())})
          << nameOf(backend);
      for (size_t bytes : startup) {
        EXPECT_NE(std::find(recording.timedBytes.begin(), recording.timedBytes.end(), bytes),
                  recording.timedBytes.end())
            << nameOf(backend) << ": " << bytes << " bytes were never timed";
      }
      ASSERT_NE(parallel.beliefModel(), nullptr);
      // Its model predicts what measureAllreduce on the same device timed above (within 10x:
      // the two measurements are seconds apart on a shared GPU).
      for (const CommSample& sample : samples) {
        const double predicted = parallel.beliefModel()->seconds(sample.bytes, 1);
        EXPECT_GT(predicted, sample.seconds / 10) << nameOf(backend) << ", " << sample.bytes;
        EXPECT_LT(predicted, sample.seconds * 10) << nameOf(backend) << ", " << sample.bytes;
      }
      auto [images, labels] = batch(0, gpu);
      parallel.backward(
          autograd::softmaxCrossEntropy(parallel.forward(autograd::Variable(images)), labels));
      parallel.step(optimizer);
      parallel.synchronize();
    }
    device->shutdown();
  }
}

TEST(DataParallelOnGpu, AModelOnAnotherGpuThanTheCommunicatorsIsRefused) {
  SKIP_WITHOUT_GPU();
  std::string whyNone;
  if (cudaDeviceCount(&whyNone) < 2) GTEST_SKIP() << "needs two GPUs";
  SingleProcessCommunicator host;
  std::unique_ptr<DeviceCommunicator> device = makeStagingCommunicator(host, 1);
  auto model = makeModel(cudaDevice(0));
  try {
    DataParallel parallel(model, *device, optionsFor("wfbp"));
    ADD_FAILURE() << "a model on cuda:0 was accepted by a communicator of cuda:1";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("reduces buffers on cuda:1"), std::string::npos)
        << error.what();
  }
  device->shutdown();
}

}  // namespace
}  // namespace imerge::distributed
