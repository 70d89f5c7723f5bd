// imerge-step-bench: the time of one training step (forward, softmax cross-entropy, backward,
// SGD update) of a network, after warm-up, on the CPU or a GPU, as one JSON line.
// bench/pytorch_step_bench.py times the same networks in PyTorch; bench/compare_with_pytorch.sh
// (CPU) and scripts/gpu-check.sh (GPU) put the two side by side.
//
// Networks:
//   small-cnn   models/small_cnn.h on [B, 1, 28, 28]
//   conv-stack  3x3 conv + batch-norm + ReLU blocks 3->64->64->128->256 on [B, 3, 56, 56],
//               then global average pooling and a linear layer to 10 classes
//   any name of models/registry.h (resnet50, vgg16, resnet18, ...) on [B, 3, S, S], S the
//               --image-size (224 by default; 32 with --small-images, which also selects the
//               small-image stem), with 1000 classes (10 with --small-images) as imerge-train's
//               synthetic data
//
// One fixed random batch is made once (and, with --device cuda, copied to the GPU once), so
// the timed steps measure the step alone, no data loading or host-device copy. On CUDA the
// device is synchronised before each step's clock starts and before it stops, since kernels
// only queue work; the first steps (--warmup) include cuDNN's algorithm search per shape.
//
// Output fields: median_ms and min_ms per step over --iterations, images_per_s (batch over the
// median), peak_bytes (the device allocator's peak of live tensor bytes since the start,
// warm-up included: parameters, gradients, momentum, activations, workspaces) and
// system_allocations_in_timed_steps (raw allocations in the timed steps: 0 in the steady state),
// peak_rss_bytes (the process's peak resident memory, getrusage's ru_maxrss, as
// bench/pytorch_step_bench.py reports it, so the two peaks are measured the same way) and
// step_gflop (6 x the forward multiply-accumulates x the batch: forward, backward-data and
// backward-weights each one multiply-add per forward one; the usual count, which overstates the
// first layer a little, since no gradient flows into the images).
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <iostream>
#include <vector>

#include "core/cuda/cuda_device.h"
#include "core/device.h"
#include "core/error.h"
#include "core/gpu_policy/cuda_settings.h"
#include "distributed/profiling/flops_profile.h"
#include "layers/layers.h"
#include "models/registry.h"
#include "models/small_cnn.h"
#include "optim/sgd.h"

namespace {

using namespace imerge;

std::shared_ptr<layers::Sequential> convStack(Generator& generator) {
  auto net = std::make_shared<layers::Sequential>();
  const std::vector<int64_t> channels{3, 64, 64, 128, 256};
  for (size_t i = 0; i + 1 < channels.size(); ++i) {
    net->add(
        std::make_shared<layers::Conv2d>(channels[i], channels[i + 1], 3, 1, 1, false, generator));
    net->add(std::make_shared<layers::BatchNorm2d>(channels[i + 1]));
    net->add(std::make_shared<layers::ReLU>());
  }
  net->add(std::make_shared<layers::AdaptiveAvgPool2d>(std::array<int64_t, 2>{1, 1}));
  net->add(std::make_shared<layers::Flatten>());
  net->add(std::make_shared<layers::Linear>(256, 10, true, generator));
  return net;
}

struct Options {
  std::string network = "small-cnn";
  std::string device = "cpu";
  int64_t batch = 16;
  int64_t imageSize = 0;  // 0: the network's default (224, or 32 with --small-images)
  bool smallImages = false;
  int threads = 2;
  int warmup = 3;
  int iterations = 10;
  bool deterministic = false;
  bool noTf32 = false;
};

struct Workload {
  std::shared_ptr<layers::Module> model;
  Shape inputShape;  // [B, C, H, W]
  int64_t classes = 10;
};

Workload buildWorkload(const Options& options, Generator& generator) {
  if (options.network == "small-cnn") {
    return {models::smallCnn(1, 10, generator), {options.batch, 1, 28, 28}, 10};
  }
  if (options.network == "conv-stack") {
    return {convStack(generator), {options.batch, 3, 56, 56}, 10};
  }
  const int64_t size = options.imageSize > 0 ? options.imageSize : options.smallImages ? 32 : 224;
  models::ModelConfig config;
  config.inChannels = 3;
  config.classes = options.smallImages ? 10 : 1000;
  config.smallImages = options.smallImages;
  return {models::buildModel(options.network, config, generator),
          {options.batch, 3, size, size},
          config.classes};
}

// One step's floating-point work in GFLOP (see the file comment).
double stepGigaflop(layers::Module& model, const Shape& inputShape) {
  double macsPerImage = 0;
  const Shape image(inputShape.begin() + 1, inputShape.end());  // [C, H, W]
  for (const auto& layer : distributed::countForwardMacs(model, image)) macsPerImage += layer.macs;
  return 6.0 * macsPerImage * static_cast<double>(inputShape[0]) / 1e9;
}

size_t peakResidentBytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<size_t>(usage.ru_maxrss) * 1024;  // Linux reports kilobytes
}

int run(const Options& options) {
  IMERGE_CHECK(!(options.device == "cpu" && (options.deterministic || options.noTf32)),
               "--deterministic and --no-tf32 choose cuDNN algorithms: they need --device cuda");
  setNumThreads(options.threads);
  // Settings first: they apply to convolutions whose algorithm is not chosen yet.
  if (options.device == "cuda") {
    cuda::setCudaSettings({.allowTf32 = !options.noTf32, .deterministic = options.deterministic});
  }
  Device& device = options.device == "cuda" ? static_cast<Device&>(cudaDevice()) : cpuDevice();
  // Waits for the queued kernels, so the clock measures work done rather than work queued.
  const std::function<void()> synchronize = [&] { device.synchronize(); };

  Generator generator(0);
  Workload work = buildWorkload(options, generator);
  const double gigaflop = stepGigaflop(*work.model, work.inputShape);
  // Before the optimizer: its momentum buffers are made on the parameters' device.
  work.model->to(device);
  Tensor hostImages = Tensor::empty(work.inputShape);  // [B, C, H, W]
  generator.fillNormal(hostImages, 0.0f, 1.0f);
  std::vector<int64_t> labelValues(options.batch);
  for (int64_t i = 0; i < options.batch; ++i) labelValues[i] = i % work.classes;
  const Tensor images = hostImages.to(device);
  const Tensor labels = Tensor::fromVector(labelValues, {options.batch}).to(device);  // [B]

  optim::Sgd optimizer(work.model->parameters(), {.learningRate = 0.01f, .momentum = 0.9f});
  auto step = [&] {
    optimizer.zeroGrad();
    auto loss =
        autograd::softmaxCrossEntropy(work.model->forward(autograd::Variable(images)), labels);
    loss.backward();
    optimizer.step();
  };

  for (int i = 0; i < options.warmup; ++i) step();
  synchronize();
  const size_t allocationsBefore = device.memoryStats().systemAllocations;
  std::vector<double> times;
  for (int i = 0; i < options.iterations; ++i) {
    const auto start = std::chrono::steady_clock::now();
    step();
    synchronize();
    times.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
  }
  std::sort(times.begin(), times.end());
  const auto stats = device.memoryStats();
  const Shape& shape = work.inputShape;
  std::printf(
      "{\"framework\": \"imerge\", \"network\": \"%s\", \"device\": \"%s\", \"batch\": %lld, "
      "\"image_size\": %lld, \"small_images\": %s, \"threads\": %d, \"tf32\": %s, "
      "\"deterministic\": %s, \"warmup\": %d, \"iterations\": %d, \"median_ms\": %.3f, "
      "\"min_ms\": %.3f, \"images_per_s\": %.1f, \"peak_bytes\": %zu, "
      "\"system_allocations_in_timed_steps\": %zu, \"peak_rss_bytes\": %zu, "
      "\"step_gflop\": %.3f}\n",
      options.network.c_str(), device.name().c_str(), static_cast<long long>(options.batch),
      static_cast<long long>(shape[3]), options.smallImages ? "true" : "false", options.threads,
      options.device == "cuda" && !options.noTf32 ? "true" : "false",
      options.deterministic ? "true" : "false", options.warmup, options.iterations,
      times[times.size() / 2], times[0], options.batch * 1000.0 / times[times.size() / 2],
      stats.peakAllocatedBytes, stats.systemAllocations - allocationsBefore, peakResidentBytes(),
      gigaflop);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  std::vector<std::string> networks{"small-cnn", "conv-stack"};
  for (const std::string& name : models::modelNames()) networks.push_back(name);
  CLI::App app{"imerge-step-bench: time one training step"};
  app.add_option("--network", options.network, "small-cnn, conv-stack or a models/registry.h name")
      ->check(CLI::IsMember(networks))
      ->capture_default_str();
  app.add_option("--device", options.device, "cpu or cuda")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  app.add_option("--batch", options.batch)->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--image-size", options.imageSize,
                 "registry models: input height and width (default 224, 32 with --small-images)")
      ->check(CLI::Range(int64_t{8}, int64_t{1024}));
  app.add_flag("--small-images", options.smallImages,
               "registry models: the small-image stem and 10 classes");
  app.add_option("--threads", options.threads)->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--warmup", options.warmup)->check(CLI::NonNegativeNumber)->capture_default_str();
  app.add_option("--iterations", options.iterations)
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_flag("--deterministic", options.deterministic,
               "cuDNN: only algorithms that give bit-identical results run to run");
  app.add_flag("--no-tf32", options.noTf32, "cuDNN convolutions in strict float32, no TF32");
  CLI11_PARSE(app, argc, argv);
  try {
    const bool fixedShape = options.network == "small-cnn" || options.network == "conv-stack";
    IMERGE_CHECK(!fixedShape || (options.imageSize == 0 && !options.smallImages),
                 "--image-size and --small-images are for registry models; --network ",
                 options.network, " has a fixed input shape");
    return run(options);
  } catch (const std::exception& error) {
    std::cerr << "imerge-step-bench: error: " << error.what() << "\n";
    return 1;
  }
}
