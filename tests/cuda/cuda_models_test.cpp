// Whole models and training on CUDA against the same on the CPU (ctest label "gpu"; each test
// skips, saying why, without a GPU):
//  - every registered model, from the same weights and batch, gives the same logits, loss, every
//    parameter's gradient and batch-norm running statistics on both devices;
//  - a few SGD steps of a residual network stay together;
//  - with deterministic algorithms two runs from one seed are bit-identical, dropout included;
//  - the training loop's steady state allocates no device memory;
//  - imerge-train's own loop (training/classifier_training) learns Fashion-MNIST on the GPU.
//
// Tolerances: the kernel tests (cudnn_*_test, pooling_lrn_dropout_test) hold each op to 1e-4.
// Through a whole network cuDNN's algorithms (implicit GEMM, Winograd, FFT) round differently
// from oneDNN's, and dozens of layers compound that, so model outputs and gradients are held to
// 1e-3 of each tensor's largest magnitude, in strict float32 (no TF32).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "autograd/autograd.h"
#include "core/cuda/cuda_device.h"
#include "data/idx_dataset.h"
#include "layers/layers.h"
#include "models/registry.h"
#include "support/gpu_test.h"
#include "training/classifier_training.h"

namespace imerge {
namespace {

using autograd::Variable;

using testing::StrictCudaSettings;

// Normally distributed values, as a model's inputs.
Tensor normalTensor(const Shape& shape, uint64_t seed) {
  Generator generator(seed);
  Tensor tensor = Tensor::empty(shape);
  generator.fillNormal(tensor, 0.0f, 1.0f);
  return tensor;
}

// max |gpu - cpu| <= tolerance * max |cpu| over the tensor, no NaN or infinity on either side
// (support/compare.h), the worst element reported.
void expectCloseToScale(const Tensor& onGpu, const Tensor& onCpu, const std::string& what,
                        float tolerance = 1e-3f) {
  EXPECT_TRUE(testing::closeToScale(onGpu, onCpu, tolerance, what + " " + onCpu.describe()));
}

bool containsDropout(const layers::Module& module) {
  if (module.describe().rfind("Dropout", 0) == 0) return true;
  for (const auto& [name, child] : module.children()) {
    if (containsDropout(*child)) return true;
  }
  return false;
}

// The smallest input each stem takes, as in tests/models/model_zoo_test.cpp.
Shape inputShapeFor(const std::string& name, const models::ModelConfig& config) {
  const int64_t size = config.smallImages ? 32 : (name == "alexnet" ? 64 : 32);
  return {2, config.inChannels, size, size};
}

struct StepResult {
  Tensor logits;
  float loss = 0;
  std::vector<Tensor> gradients;  // per parameter, registration order
  std::vector<Tensor> buffers;    // float buffers (running statistics)
};

StepResult forwardBackward(layers::Module& model, const Tensor& images, const Tensor& labels) {
  Device& device = model.device();
  Variable logits = model.forward(Variable(images.to(device)));
  Variable loss = autograd::softmaxCrossEntropy(logits, labels.to(device));
  loss.backward();
  StepResult result{logits.tensor().to(cpuDevice()), loss.tensor().item(), {}, {}};
  for (const Variable& parameter : model.parameters()) {
    result.gradients.push_back(parameter.grad().to(cpuDevice()));
  }
  for (const auto& [name, buffer] : model.namedBuffers()) {
    if (buffer.dtype() == DType::Float32) result.buffers.push_back(buffer.to(cpuDevice()));
  }
  return result;
}

class EveryModelOnCuda : public ::testing::TestWithParam<std::pair<std::string, bool>> {};

TEST_P(EveryModelOnCuda, MatchesTheCpuInForwardAndBackward) {
  SKIP_WITHOUT_GPU();
  StrictCudaSettings strict;
  const auto& [name, smallImages] = GetParam();
  const models::ModelConfig config{.inChannels = 3, .classes = 10, .smallImages = smallImages};
  Generator cpuWeights(17), gpuWeights(17);
  auto onCpu = models::buildModel(name, config, cpuWeights);
  auto onGpu = models::buildModel(name, config, gpuWeights);
  onGpu->to(cudaDevice());
  // Dropout masks are drawn differently on the two devices (core/cuda/dropout.h): models with
  // dropout are compared in evaluation mode, whose backward still runs through every layer.
  if (containsDropout(*onCpu)) {
    onCpu->eval();
    onGpu->eval();
  }
  const Tensor images = normalTensor(inputShapeFor(name, config), 3);
  const Tensor labels = Tensor::fromVector(std::vector<int64_t>{1, 7}, {2});
  const StepResult cpu = forwardBackward(*onCpu, images, labels);
  const StepResult gpu = forwardBackward(*onGpu, images, labels);

  expectCloseToScale(gpu.logits, cpu.logits, name + " logits");
  EXPECT_NEAR(gpu.loss, cpu.loss, 1e-3f * std::max(1.0f, cpu.loss)) << name;
  const auto parameters = onCpu->namedParameters();
  ASSERT_EQ(gpu.gradients.size(), cpu.gradients.size());
  for (size_t i = 0; i < cpu.gradients.size(); ++i) {
    expectCloseToScale(gpu.gradients[i], cpu.gradients[i],
                       name + " gradient of " + parameters[i].first);
  }
  ASSERT_EQ(gpu.buffers.size(), cpu.buffers.size());
  for (size_t i = 0; i < cpu.buffers.size(); ++i) {
    expectCloseToScale(gpu.buffers[i], cpu.buffers[i], name + " buffer " + std::to_string(i));
  }
}

std::vector<std::pair<std::string, bool>> everyModel() {
  std::vector<std::pair<std::string, bool>> cases;
  for (const std::string& name : models::modelNames()) {
    // The ImageNet stem of every model that has one, and the small-image stem of all.
    if (name.rfind("resnet", 0) == 0 || name.rfind("vgg", 0) == 0 || name == "alexnet") {
      cases.emplace_back(name, false);
    }
    if (name != "alexnet") cases.emplace_back(name, true);
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Models, EveryModelOnCuda, ::testing::ValuesIn(everyModel()),
                         [](const auto& info) {
                           return info.param.first + (info.param.second ? "_small" : "_imagenet");
                         });

// Three SGD steps (momentum, weight decay) of ResNet-20 on each device from the same weights.
TEST(CudaTraining, ResidualNetworkStepsStayWithTheCpu) {
  SKIP_WITHOUT_GPU();
  StrictCudaSettings strict;
  Generator cpuWeights(5), gpuWeights(5);
  const models::ModelConfig config{.inChannels = 3, .classes = 10, .smallImages = true};
  auto onCpu = models::buildModel("resnet20", config, cpuWeights);
  auto onGpu = models::buildModel("resnet20", config, gpuWeights);
  onGpu->to(cudaDevice());
  const optim::SgdOptions options{.learningRate = 0.05f, .momentum = 0.9f, .weightDecay = 5e-4f};
  optim::Sgd cpuSgd(onCpu->parameters(), options), gpuSgd(onGpu->parameters(), options);
  for (int step = 0; step < 3; ++step) {
    const Tensor images = normalTensor({8, 3, 32, 32}, 100 + step);
    const Tensor labels = Tensor::fromVector(std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7}, {8});
    cpuSgd.zeroGrad();
    gpuSgd.zeroGrad();
    const StepResult cpu = forwardBackward(*onCpu, images, labels);
    const StepResult gpu = forwardBackward(*onGpu, images, labels);
    EXPECT_NEAR(gpu.loss, cpu.loss, 1e-3f * std::max(1.0f, cpu.loss)) << "step " << step;
    cpuSgd.step();
    gpuSgd.step();
  }
  const auto cpuParameters = onCpu->namedParameters();
  const auto gpuParameters = onGpu->namedParameters();
  for (size_t i = 0; i < cpuParameters.size(); ++i) {
    expectCloseToScale(gpuParameters[i].second.tensor(), cpuParameters[i].second.tensor(),
                       "after 3 steps, " + cpuParameters[i].first);
  }
}

// Losses of `steps` training steps of a model with batch norm, pooling and dropout, from one
// seed, on the GPU. The model's dropout layers draw from the generator that built it.
std::vector<float> trainOnGpu(int steps, size_t* systemAllocationsAfterWarmup = nullptr) {
  Generator weights(9), data(11);
  auto model = models::buildModel("vgg11_bn", {.inChannels = 3, .classes = 10, .smallImages = true},
                                  weights);
  CudaDevice& gpu = cudaDevice();
  model->to(gpu);
  optim::Sgd sgd(model->parameters(), {.learningRate = 0.01f, .momentum = 0.9f});
  std::vector<float> losses;
  for (int step = 0; step < steps; ++step) {
    Tensor images = Tensor::empty({4, 3, 32, 32});
    data.fillNormal(images, 0.0f, 1.0f);
    std::vector<int64_t> labels(4);
    for (auto& label : labels) label = static_cast<int64_t>(data.nextInt(10));
    sgd.zeroGrad();
    Variable loss = autograd::softmaxCrossEntropy(model->forward(Variable(images.to(gpu))),
                                                  Tensor::fromVector(labels, {4}).to(gpu));
    loss.backward();
    sgd.step();
    losses.push_back(loss.tensor().item());
    if (step == 1 && systemAllocationsAfterWarmup) {
      *systemAllocationsAfterWarmup = gpu.memoryStats().systemAllocations;
    }
  }
  return losses;
}

TEST(CudaTraining, DeterministicRunsFromOneSeedAreBitIdentical) {
  SKIP_WITHOUT_GPU();
  StrictCudaSettings strict;
  const std::vector<float> first = trainOnGpu(5);
  const std::vector<float> second = trainOnGpu(5);
  ASSERT_EQ(first.size(), second.size());
  for (size_t i = 0; i < first.size(); ++i) {
    EXPECT_EQ(first[i], second[i]) << "step " << i << " (bitwise)";
    EXPECT_TRUE(std::isfinite(first[i])) << "step " << i;
  }
}

TEST(CudaTraining, TheSteadyStateAllocatesNoDeviceMemory) {
  SKIP_WITHOUT_GPU();
  size_t afterWarmup = 0;
  trainOnGpu(5, &afterWarmup);
  EXPECT_EQ(cudaDevice().memoryStats().systemAllocations, afterWarmup)
      << "steps 3-5 called cudaMalloc: something allocates per step outside the cache";
}

// The loop imerge-train runs, on the GPU: one epoch of the small CNN on Fashion-MNIST.
TEST(CudaTraining, TheTrainingLoopLearnsFashionMnist) {
  SKIP_WITHOUT_GPU();
  if (!std::filesystem::exists(data::kFashionMnistDirectory)) {
    GTEST_SKIP() << data::kFashionMnistDirectory
                 << " is missing ('apt-get install -y dataset-fashion-mnist' provides it)";
  }
  Generator generator(2024);
  manualSeed(2024);
  const auto normal = data::normalize({0.2860f}, {0.3530f});
  auto train = std::make_shared<data::IdxImageDataset>(
      "fashion-mnist", data::kFashionMnistDirectory, "train", normal);
  auto test = std::make_shared<data::IdxImageDataset>("fashion-mnist", data::kFashionMnistDirectory,
                                                      "test", normal);
  data::DataLoader trainLoader(train, {.batchSize = 64, .workers = 2, .seed = 2024});
  data::DataLoader testLoader(test, {.batchSize = 256, .shuffle = false, .workers = 2});
  auto model = models::buildModel("small_cnn",
                                  {.inChannels = 1, .classes = 10, .smallImages = true}, generator);
  model->to(cudaDevice());
  optim::Sgd optimizer(model->parameters(),
                       {.learningRate = 0.05f, .momentum = 0.9f, .weightDecay = 5e-4f});
  optim::LrSchedule schedule(
      {.kind = optim::LrScheduleKind::Cosine, .baseLr = 0.05f, .totalEpochs = 1});
  const training::EpochResult trained =
      training::trainEpoch(*model, optimizer, schedule, trainLoader, 0);
  const training::EpochResult tested = training::evaluate(*model, testLoader);
  std::printf("one epoch on %s: %.0f images/s, test accuracy %.2f%%\n", cudaDevice().name().c_str(),
              trained.imagesPerSecond, 100 * tested.accuracy);
  EXPECT_EQ(trained.images, 60000);
  EXPECT_GE(tested.accuracy, 0.85);
}

}  // namespace
}  // namespace imerge
