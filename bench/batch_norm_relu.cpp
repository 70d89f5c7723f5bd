// imerge-bn-relu-bench: relu(batchNorm(x)) in training, forward and backward, as the CPU's fused
// kernels run it against the two kernels in turn (Backend's defaults, which a backend without
// fused kernels runs), on the batch-norm + relu pairs of the two ResNet-18 workloads of
// compare_with_pytorch.sh --models. Each row is the best of --repeats after one warm-up, the two
// timed alternately in each of --rounds rounds; the table keeps each side's best round.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <functional>

#include "bench/best_time.h"
#include "core/backend.h"
#include "core/cpu/cpu_backend.h"
#include "core/device.h"
#include "core/random.h"

namespace {

using imerge::Backend;
using imerge::BatchNormTrainingOutput;
using imerge::Tensor;

struct Pair {
  const char* where;
  bool smallImages;  // the 32x32 batch-32 workload; otherwise the 224x224 batch-8 one
  int64_t batch, channels, size;
  int perStep;  // pairs of this shape in one training step
};

// In ResNet-18 every basic block has one pair (bn1) and the stem one; in ResNet-50 every
// bottleneck has two (bn1, bn2), with the stride of a stage's first block in its conv2.
const Pair kPairs[] = {
    {"resnet18 small b32 stem + layer1", true, 32, 64, 32, 3},
    {"resnet18 small b32 layer2", true, 32, 128, 16, 2},
    {"resnet18 small b32 layer3", true, 32, 256, 8, 2},
    {"resnet18 small b32 layer4", true, 32, 512, 4, 2},
    {"resnet18 224 b8 stem", false, 8, 64, 112, 1},
    {"resnet18 224 b8 layer1", false, 8, 64, 56, 2},
    {"resnet18 224 b8 layer2", false, 8, 128, 28, 2},
    {"resnet18 224 b8 layer3", false, 8, 256, 14, 2},
    {"resnet18 224 b8 layer4", false, 8, 512, 7, 2},
};

// One forward and backward of the pair, fused or through the two kernels in turn; milliseconds.
double pairMilliseconds(const Pair& p, int repeats, bool fused) {
  const Backend& cpu = imerge::cpuBackend();
  imerge::Generator generator(11);
  Tensor input = Tensor::empty({p.batch, p.channels, p.size, p.size});
  generator.fillNormal(input, 0.0f, 1.0f);
  Tensor gradOutput = Tensor::emptyLike(input);
  generator.fillNormal(gradOutput, 0.0f, 1.0f);
  const Tensor weight = Tensor::full({p.channels}, 1.0f);
  const Tensor bias = Tensor::zeros({p.channels});
  Tensor runningMean = Tensor::zeros({p.channels});
  Tensor runningVar = Tensor::full({p.channels}, 1.0f);
  return 1000 * imerge::bench::bestSeconds(repeats, [&] {
           const BatchNormTrainingOutput out =
               fused ? cpu.batchNormReluTrainingForward(input, weight, bias, runningMean,
                                                        runningVar, 0.1f, 1e-5f)
                     : cpu.Backend::batchNormReluTrainingForward(input, weight, bias, runningMean,
                                                                 runningVar, 0.1f, 1e-5f);
           if (fused) {
             cpu.batchNormReluTrainingBackward(gradOutput, out.output, input, weight, out.savedMean,
                                               out.savedSpread, 1e-5f);
           } else {
             cpu.Backend::batchNormReluTrainingBackward(gradOutput, out.output, input, weight,
                                                        out.savedMean, out.savedSpread, 1e-5f);
           }
         });
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 2;
  int repeats = 10;
  int rounds = 3;
  CLI::App app{"imerge-bn-relu-bench: batch norm + relu, fused against the two kernels in turn"};
  app.add_option("--threads", threads)->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--repeats", repeats)->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--rounds", rounds)->check(CLI::PositiveNumber)->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  imerge::setNumThreads(threads);

  std::printf(
      "| pair | N x C x HxW | per step | two kernels ms | fused ms | speed-up | saved per step "
      "ms |\n|---|---|---|---|---|---|---|\n");
  double savedSmall = 0, saved224 = 0;
  for (const Pair& p : kPairs) {
    double separate = 1e30, fused = 1e30;
    for (int round = 0; round < rounds; ++round) {
      separate = std::min(separate, pairMilliseconds(p, repeats, false));
      fused = std::min(fused, pairMilliseconds(p, repeats, true));
    }
    const double saved = (separate - fused) * p.perStep;
    (p.smallImages ? savedSmall : saved224) += saved;
    std::printf("| %s | %lld x %lld x %lldx%lld | %d | %.3f | %.3f | %.2fx | %.2f |\n", p.where,
                static_cast<long long>(p.batch), static_cast<long long>(p.channels),
                static_cast<long long>(p.size), static_cast<long long>(p.size), p.perStep, separate,
                fused, separate / fused, saved);
    std::fflush(stdout);
  }
  std::printf(
      "\nsaved per training step: ResNet-18 small-image b32 %.2f ms, ResNet-18 224 b8 %.2f ms\n",
      savedSmall, saved224);
  return 0;
}
