// imerge-conv-algorithms: oneDNN's direct kernels (with their reorders from and to NCHW) against
// our own, on the stride-1 convolutions of the benchmark models: Winograd F(4x4, 3x3) for the 3x3
// ones (core/cpu/winograd.h) and one sgemm per image for ResNet-50's 1x1 ones
// (core/cpu/pointwise_conv.h). Each pass is timed alone: forward, backward-data,
// backward-weights, the best of --repeats after one warm-up. The table is what
// ConvAlgorithm::Auto's rule in core/cpu/convolution.cpp was chosen from.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <functional>
#include <vector>

#include "bench/best_time.h"
#include "core/cpu/convolution.h"
#include "core/device.h"
#include "core/random.h"

namespace {

using imerge::Conv2dParams;
using imerge::Shape;
using imerge::Tensor;
namespace cpu = imerge::cpu;

struct Problem {
  const char* where;
  int64_t batch, channels, outChannels, size;
  int64_t kernel = 3;  // 3: padding 1; 1: no padding
};

// The stride-1 layers of compare_with_pytorch.sh --models' five workloads, once each.
const Problem kProblems[] = {
    {"resnet18 small b32 layer1", 32, 64, 64, 32},
    {"resnet18 small b32 layer2", 32, 128, 128, 16},
    {"resnet18 small b32 layer3", 32, 256, 256, 8},
    {"resnet18 small b32 layer4", 32, 512, 512, 4},
    {"resnet18 224 b8 layer1", 8, 64, 64, 56},
    {"resnet18 224 b8 layer2", 8, 128, 128, 28},
    {"resnet18 224 b8 layer3", 8, 256, 256, 14},
    {"resnet18 224 b8 layer4", 8, 512, 512, 7},
    {"alexnet b32 conv3", 32, 192, 384, 13},
    {"alexnet b32 conv4", 32, 384, 256, 13},
    {"alexnet b32 conv5", 32, 256, 256, 13},
    {"vgg16 b4 conv1_2", 4, 64, 64, 224},
    {"vgg16 b4 conv2_2", 4, 128, 128, 112},
    {"vgg16 b4 conv3_2", 4, 256, 256, 56},
    {"vgg16 b4 conv4_2", 4, 512, 512, 28},
    {"vgg16 b4 conv5_2", 4, 512, 512, 14},
    {"small channels b32", 32, 8, 16, 28},
    {"small channels b32", 32, 16, 16, 28},
    {"small channels b32", 32, 32, 32, 28},
    {"resnet50 b8 layer1 1x1 in", 8, 256, 64, 56, 1},
    {"resnet50 b8 layer1 1x1 out", 8, 64, 256, 56, 1},
    {"resnet50 b8 layer2 1x1 in", 8, 512, 128, 28, 1},
    {"resnet50 b8 layer2 1x1 out", 8, 128, 512, 28, 1},
    {"resnet50 b8 layer3 1x1 in", 8, 1024, 256, 14, 1},
    {"resnet50 b8 layer3 1x1 out", 8, 256, 1024, 14, 1},
    {"resnet50 b8 layer4 1x1 in", 8, 2048, 512, 7, 1},
    {"resnet50 b8 layer4 1x1 out", 8, 512, 2048, 7, 1},
};

double bestMilliseconds(int repeats, const std::function<void()>& pass) {
  return 1000 * imerge::bench::bestSeconds(repeats, pass);
}

struct PassTimes {
  double forward, backwardData, backwardWeights;
};

Tensor randomTensor(const Shape& shape, imerge::Generator& generator) {
  Tensor tensor = Tensor::empty(shape);
  generator.fillNormal(tensor, 0.0f, 1.0f);
  return tensor;
}

PassTimes timePasses(const Problem& p, int repeats) {
  imerge::Generator generator(7);
  const Tensor input = randomTensor({p.batch, p.channels, p.size, p.size}, generator);
  const Tensor weight = randomTensor({p.outChannels, p.channels, p.kernel, p.kernel}, generator);
  const Tensor gradOutput = randomTensor({p.batch, p.outChannels, p.size, p.size}, generator);
  Conv2dParams params;
  params.padding = {p.kernel / 2, p.kernel / 2};
  PassTimes times;
  times.forward =
      bestMilliseconds(repeats, [&] { cpu::conv2dForward(input, weight, Tensor(), params); });
  times.backwardData = bestMilliseconds(
      repeats, [&] { cpu::conv2dBackward(input, weight, gradOutput, params, true, false, false); });
  times.backwardWeights = bestMilliseconds(
      repeats, [&] { cpu::conv2dBackward(input, weight, gradOutput, params, false, true, false); });
  return times;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 2;
  int repeats = 3;
  CLI::App app{"imerge-conv-algorithms: oneDNN's direct kernels against Winograd and sgemm"};
  app.add_option("--threads", threads)->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--repeats", repeats)->check(CLI::PositiveNumber)->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  imerge::setNumThreads(threads);

  std::printf(
      "| layer | N | C -> K | kernel | HxW | oneDNN direct fwd / bwd-data / bwd-weights ms | "
      "ours (Winograd 3x3, sgemm 1x1) ms | speed-up fwd / data / weights |\n"
      "|---|---|---|---|---|---|---|---|\n");
  for (const Problem& p : kProblems) {
    cpu::setConvAlgorithm(cpu::ConvAlgorithm::Direct);
    const PassTimes direct = timePasses(p, repeats);
    // Winograd wherever it applies; the 1x1 layers then take the sgemm path.
    cpu::setConvAlgorithm(cpu::ConvAlgorithm::Winograd);
    const PassTimes winograd = timePasses(p, repeats);
    std::printf(
        "| %s | %lld | %lld -> %lld | %lldx%lld | %lldx%lld | %.1f / %.1f / %.1f | %.1f / %.1f / "
        "%.1f | %.2f / %.2f / %.2f |\n",
        p.where, static_cast<long long>(p.batch), static_cast<long long>(p.channels),
        static_cast<long long>(p.outChannels), static_cast<long long>(p.kernel),
        static_cast<long long>(p.kernel), static_cast<long long>(p.size),
        static_cast<long long>(p.size), direct.forward, direct.backwardData, direct.backwardWeights,
        winograd.forward, winograd.backwardData, winograd.backwardWeights,
        direct.forward / winograd.forward, direct.backwardData / winograd.backwardData,
        direct.backwardWeights / winograd.backwardWeights);
    std::fflush(stdout);
  }
  return 0;
}
