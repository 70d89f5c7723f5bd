// imerge-step-bench: the time of one training step (forward, softmax cross-entropy, backward,
// SGD update) of a network, after warm-up, as one JSON line. bench/pytorch_step_bench.py
// times the same networks in PyTorch and bench/compare_with_pytorch.sh puts them side by side.
//
// Networks:
//   small-cnn   models/small_cnn.h on [B, 1, 28, 28]
//   conv-stack  3x3 conv + batch-norm + ReLU blocks 3->64->64->128->256 on [B, 3, 56, 56],
//               then global average pooling and a linear layer to 10 classes
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "core/device.h"
#include "layers/layers.h"
#include "models/small_cnn.h"

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

}  // namespace

int main(int argc, char** argv) {
  std::string network = "small-cnn";
  int64_t batch = 16;
  int threads = 2;
  int warmup = 3;
  int iterations = 10;
  CLI::App app{"imerge-step-bench: time one training step"};
  app.add_option("--network", network)->check(CLI::IsMember({"small-cnn", "conv-stack"}));
  app.add_option("--batch", batch)->check(CLI::PositiveNumber);
  app.add_option("--threads", threads)->check(CLI::PositiveNumber);
  app.add_option("--warmup", warmup)->check(CLI::NonNegativeNumber);
  app.add_option("--iterations", iterations)->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);

  setNumThreads(threads);
  Generator generator(0);
  std::shared_ptr<layers::Module> model;
  Shape inputShape;
  if (network == "small-cnn") {
    model = models::smallCnn(1, 10, generator);
    inputShape = {batch, 1, 28, 28};
  } else {
    model = convStack(generator);
    inputShape = {batch, 3, 56, 56};
  }
  Tensor images = Tensor::empty(inputShape);
  generator.fillNormal(images, 0.0f, 1.0f);
  std::vector<int64_t> labelValues(batch);
  for (int64_t i = 0; i < batch; ++i) labelValues[i] = i % 10;
  Tensor labels = Tensor::fromVector(labelValues, {batch});

  layers::Sgd optimizer(model->parameters(), {.learningRate = 0.01f, .momentum = 0.9f});
  auto step = [&] {
    optimizer.zeroGrad();
    auto loss = autograd::softmaxCrossEntropy(model->forward(autograd::Variable(images)), labels);
    loss.backward();
    optimizer.step();
  };

  for (int i = 0; i < warmup; ++i) step();
  const size_t allocationsBefore = cpuDevice().memoryStats().systemAllocations;
  std::vector<double> times;
  for (int i = 0; i < iterations; ++i) {
    const auto start = std::chrono::steady_clock::now();
    step();
    times.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
  }
  std::sort(times.begin(), times.end());
  const auto stats = cpuDevice().memoryStats();
  std::printf(
      "{\"framework\": \"imerge\", \"network\": \"%s\", \"batch\": %lld, \"threads\": %d, "
      "\"median_ms\": %.3f, \"min_ms\": %.3f, \"images_per_s\": %.1f, \"peak_bytes\": %zu, "
      "\"system_allocations_in_timed_steps\": %zu}\n",
      network.c_str(), static_cast<long long>(batch), threads, times[times.size() / 2], times[0],
      batch * 1000.0 / times[times.size() / 2], stats.peakAllocatedBytes,
      stats.systemAllocations - allocationsBefore);
  return 0;
}
