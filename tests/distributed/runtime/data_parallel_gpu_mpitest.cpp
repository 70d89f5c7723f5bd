// Data-parallel training of a model on GPUs under mpirun, against one process on one GPU: for
// every strategy but priority (refused among several ranks on GPUs, checked here), and for
// imerge-overlap also with split and deferred buckets (a plan for a slow network), N ranks that
// train 4 steps on their own micro-batches end with the parameters of one process that runs all
// N micro-batches per step on its GPU and averages their gradients (to 1e-5 of each tensor's
// largest magnitude). Also: ranks start from rank 0's parameters (the start-up broadcast of
// device tensors).
//
// Run by CTest as `mpirun -np 2 data_parallel_gpu_mpitest --backend=mpi|nccl` (label
// "gpu;mpi"). `mpi`: the MPI staging backend, so both ranks may share one GPU; `nccl`: a GPU per
// rank. Every rank skips every test, saying why, when any rank has no GPU, or for nccl when a
// machine has fewer GPUs than ranks (the ranks agree, so none waits in a collective alone), and
// the job then exits 77, which CTest reports as skipped.
//
// The model is an MLP (Linear, ReLU, softmax cross-entropy, SGD): the ops with CUDA kernels.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <functional>

#include "autograd/ops/loss.h"
#include "core/cuda/cuda_device.h"
#include "core/cuda/elementwise.h"
#include "distributed/comm/device_communicator.h"
#include "distributed/comm/mpi_communicator.h"
#include "distributed/runtime/data_parallel.h"
#include "layers/layers.h"
#include "support/compare.h"
#include "support/error_text.h"
#include "support/gpu_test.h"
#include "support/mpi_test_world.h"
#include "support/parameter_values.h"

namespace imerge::distributed {
namespace {

Communicator* world = nullptr;              // the host (MPI) communicator
DeviceCommunicator* deviceWorld = nullptr;  // the gradients' communicator
int gpuIndex = 0;
std::string skipReason;  // the same on every rank

constexpr int64_t kMicroBatch = 4;
constexpr int64_t kSteps = 4;

std::shared_ptr<layers::Sequential> makeModel(uint64_t seed) {
  Generator generator(seed);
  auto net = std::make_shared<layers::Sequential>();
  net->add(std::make_shared<layers::Linear>(20, 32, true, generator));
  net->add(std::make_shared<layers::ReLU>());
  net->add(std::make_shared<layers::Linear>(32, 32, true, generator));
  net->add(std::make_shared<layers::ReLU>());
  net->add(std::make_shared<layers::Linear>(32, 10, true, generator));
  net->to(cudaDevice(gpuIndex));
  return net;
}

optim::SgdOptions sgdOptions() {
  return {.learningRate = 0.1f, .momentum = 0.9f, .weightDecay = 5e-4f};
}

// Micro-batch `part` of step `step`'s global batch, on this rank's GPU: the same on every rank.
std::pair<Tensor, Tensor> microBatch(int64_t step, int part) {
  Generator generator(1000 + 97 * step + part);
  Tensor images = Tensor::empty({kMicroBatch, 20});
  generator.fillNormal(images, 0.0f, 1.0f);
  std::vector<int64_t> labels(kMicroBatch);
  for (auto& label : labels) label = static_cast<int64_t>(generator.nextInt(10));
  CudaDevice& gpu = cudaDevice(gpuIndex);
  return {images.to(gpu), Tensor::fromVector(labels, {kMicroBatch}).to(gpu)};
}

// One process on this rank's GPU: every micro-batch's gradient accumulated, averaged, one step.
std::vector<std::vector<float>> trainOneProcess(int workers) {
  auto model = makeModel(42);
  optim::Sgd optimizer(model->parameters(), sgdOptions());
  for (int64_t step = 0; step < kSteps; ++step) {
    optimizer.zeroGrad();
    for (int part = 0; part < workers; ++part) {
      auto [images, labels] = microBatch(step, part);
      autograd::softmaxCrossEntropy(model->forward(autograd::Variable(images)), labels).backward();
    }
    for (autograd::Variable& parameter : model->parameters()) {
      cuda::scaleInPlace(parameter.grad(), 1.0f / static_cast<float>(workers));
    }
    optimizer.step();
  }
  return testing::parameterValues(*model);
}

DataParallelOptions optionsFor(const std::string& strategy) {
  DataParallelOptions options;
  options.strategy = strategy;
  options.planner.fusionBytes = 2048;  // several buckets even for this small model
  options.planner.sliceElements = 100;
  for (size_t bytes = 4; bytes <= (size_t{16} << 20); bytes *= 2) {
    options.commSamples.push_back({bytes, 2, bytes < 8192 ? 30e-6 : 60e-6 + bytes / 2e9});
  }
  options.warmupSteps = 2;  // the plan is rebuilt from measured device times after step 2 of 4
  return options;
}

class MatchesOneProcessOnGpu : public ::testing::TestWithParam<std::string> {};

// N ranks' parameters after kSteps steps against one process's, reported by rank 0; `check`
// sees the DataParallel before it is destroyed.
void expectMatchesOneProcess(const std::string& strategy, const DataParallelOptions& options,
                             const std::function<void(const DataParallel&)>& check = {}) {
  std::vector<std::vector<float>> distributed;
  {
    // Ranks other than 0 start from other weights, which the broadcast of rank 0's replaces.
    auto model = makeModel(42 + static_cast<uint64_t>(world->rank()));
    optim::Sgd optimizer(model->parameters(), sgdOptions());
    DataParallel parallel(model, *deviceWorld, options);
    for (int64_t step = 0; step < kSteps; ++step) {
      auto [images, labels] = microBatch(step, world->rank());
      autograd::Variable loss =
          autograd::softmaxCrossEntropy(parallel.forward(autograd::Variable(images)), labels);
      parallel.backward(loss);
      parallel.step(optimizer);
      loss.tensor().item();  // as the training loop does: the host waits for the step
    }
    parallel.synchronize();
    EXPECT_EQ(parallel.plansBuilt(), 2) << "the start-up plan and the one after the warm-up";
    if (check) check(parallel);
    distributed = testing::parameterValues(*model);
  }
  const std::vector<std::vector<float>> reference = trainOneProcess(world->size());
  const ::testing::AssertionResult close =
      testing::parametersCloseToScale(distributed, reference, 1e-5,
                                      strategy + " on " + std::to_string(world->size()) +
                                          " ranks over " + deviceWorld->backendName(),
                                      testing::parameterNames(*makeModel(42)));
  if (world->rank() == 0) std::printf("%s\n", close.message());
  EXPECT_TRUE(close);
}

TEST_P(MatchesOneProcessOnGpu, AfterFourSteps) {
  SKIP_FOR_REASON(skipReason);
  expectMatchesOneProcess(GetParam(), optionsFor(GetParam()));
}

// Every strategy but priority (refused on GPUs among several ranks, test below).
std::vector<std::string> strategiesForGpus() {
  std::vector<std::string> names;
  for (const std::string& name : strategyNames()) {
    if (name != "priority") names.push_back(name);
  }
  return names;
}

INSTANTIATE_TEST_SUITE_P(EveryStrategy, MatchesOneProcessOnGpu,
                         ::testing::ValuesIn(strategiesForGpus()));

TEST(DataParallelOnGpus, EveryRankStartsFromRankZerosParameters) {
  SKIP_FOR_REASON(skipReason);
  auto model = makeModel(42 + static_cast<uint64_t>(world->rank()));
  DataParallel parallel(model, *deviceWorld, optionsFor("wfbp"));
  auto rankZero = makeModel(42);
  EXPECT_EQ(testing::parameterValues(*model), testing::parameterValues(*rankZero));
}

TEST(DataParallelOnGpus, PriorityAmongSeveralRanksIsRefused) {
  SKIP_FOR_REASON(skipReason);
  auto model = makeModel(42);
  const std::string message = testing::errorMessage(
      [&] { DataParallel parallel(model, *deviceWorld, optionsFor("priority")); });
  testing::expectContains(message, "'priority' strategy cannot reduce gradients on cuda:");
}

// Planned for a network where a message costs 5 ms plus 10 ns per byte and each half of a
// split one half of that (the ring rule), far more than this model's backward: imerge-overlap
// splits or defers buckets, so reduce-scatters, all-gathers and all-reduces before the next
// forward run through the device communicator, and each layer's update waits for its bucket.
TEST(DataParallelOnGpus, ImergeOverlapWithAForwardPhaseMatchesOneProcess) {
  SKIP_FOR_REASON(skipReason);
  DataParallelOptions options = optionsFor("imerge-overlap");
  options.commSamples.clear();
  for (size_t bytes = 4; bytes <= (size_t{16} << 20); bytes *= 2) {
    const double seconds = 5e-3 + 1e-8 * static_cast<double>(bytes);
    options.commSamples.push_back({bytes, 2, seconds});
    options.reduceScatterSamples.push_back({bytes, 2, seconds / 2});
    options.allGatherSamples.push_back({bytes, 2, seconds / 2});
  }
  expectMatchesOneProcess("imerge-overlap", options, [](const DataParallel& parallel) {
    EXPECT_TRUE(parallel.plan().hasForwardPhase()) << "no split or deferred bucket was planned";
  });
}

}  // namespace
}  // namespace imerge::distributed

// The exit status of a job whose every test skipped (CTest's SKIP_RETURN_CODE, as automake's).
constexpr int kSkipped = 77;

int main(int argc, char** argv) {
  using namespace imerge;
  using namespace imerge::distributed;
  ::testing::InitGoogleTest(&argc, argv);
  std::string backend = "mpi";
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--backend=", 10) == 0) backend = argv[i] + 10;
  }
  if (backend != "mpi" && backend != "nccl") {
    std::fprintf(stderr, "data_parallel_gpu_mpitest: --backend=mpi or --backend=nccl, not %s\n",
                 backend.c_str());
    return 2;
  }
  setNumThreads(1);
  std::unique_ptr<MpiCommunicator> communicator =
      test::startMpiTestWorld("data_parallel_gpu_mpitest", {.timeoutSeconds = 60});
  if (!communicator) return 1;
  world = communicator.get();

  // Whether this job can run: every rank must have a GPU, and NCCL a GPU per local rank.
  std::string whyNone;
  const int gpus = cudaDeviceCount(&whyNone);
  const bool exclusive = backend == "nccl";
  int64_t reasons[2] = {gpus == 0, exclusive && gpus > 0 && localRankCount() > gpus};
  world->allreduceMax(reasons, 2);
  if (reasons[0]) {
    skipReason = "a rank has no usable GPU" + (gpus == 0 ? " (" + whyNone + ")" : std::string());
  } else if (reasons[1]) {
    skipReason = "--backend=nccl needs a GPU per rank; this machine has " + std::to_string(gpus) +
                 " for " + std::to_string(localRankCount()) + " ranks";
  }
  std::unique_ptr<DeviceCommunicator> device;
  int64_t failed = 0;
  try {
    if (skipReason.empty()) {
      gpuIndex = gpuForLocalRank(localRank(), localRankCount(), gpus, exclusive, backend);
      device = exclusive ? makeNcclCommunicator(*world, gpuIndex, 60.0)
                         : makeStagingCommunicator(*world, gpuIndex);
      deviceWorld = device.get();
    }
    failed = RUN_ALL_TESTS() != 0;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "data_parallel_gpu_mpitest on rank %d: %s\n", world->rank(), error.what());
    world->abort(1);
  }
  if (device) device->shutdown();
  world->allreduceMax(&failed, 1);  // one verdict for the whole job
  communicator->shutdown();
  // Every test skipped: CTest's SKIP_RETURN_CODE, so the summary counts it skipped, not passed.
  if (!failed && !skipReason.empty()) {
    if (world->rank() == 0) std::printf("every test skipped: %s\n", skipReason.c_str());
    return kSkipped;
  }
  return static_cast<int>(failed);
}
