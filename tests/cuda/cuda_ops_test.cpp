// Every CUDA kernel against its CPU counterpart on the same inputs (1e-4 relative), a training
// step of a small network on both devices, and the CUDA device's memory behaviour. Needs a GPU:
// each test skips, saying why, where there is none (ctest label "gpu"; scripts/gpu-check.sh).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "autograd/autograd.h"
#include "core/cpu/elementwise.h"
#include "core/cpu/gemm.h"
#include "core/cpu/softmax_cross_entropy.h"
#include "core/cuda/cuda_device.h"
#include "core/cuda/elementwise.h"
#include "core/cuda/gemm.h"
#include "core/cuda/softmax_cross_entropy.h"
#include "optim/sgd.h"
#include "support/error_text.h"
#include "support/gpu_test.h"
#include "support/gradcheck.h"

namespace imerge {
namespace {

using autograd::Variable;
using cpu::Transpose;
using testing::expectClose;
using testing::randomTensor;

TEST(CudaDevice, CopiesRoundTripAndStayOnTheDevice) {
  SKIP_WITHOUT_GPU();
  CudaDevice& gpu = cudaDevice();
  EXPECT_EQ(gpu.name(), "cuda:0");
  const Tensor host = randomTensor({7, 5}, 1);
  Tensor there = host.to(gpu);
  EXPECT_EQ(&there.device(), &gpu);
  EXPECT_EQ(there.clone().to(cpuDevice()).toVector(), host.toVector());
  Tensor zeros = Tensor::zeros({9}, DType::Float32, gpu);
  EXPECT_EQ(zeros.toVector(), std::vector<float>(9, 0.0f));
  Tensor sevens = Tensor::full({9}, 7.0f, gpu);
  EXPECT_EQ(sevens.toVector(), std::vector<float>(9, 7.0f));
}

TEST(CudaDevice, TheSteadyStateAllocatesNothingNew) {
  SKIP_WITHOUT_GPU();
  CudaDevice& gpu = cudaDevice();
  auto step = [&] {
    Tensor a = Tensor::empty({256, 256}, DType::Float32, gpu);
    Tensor b = cuda::scale(a, 2.0f);
  };
  step();
  const size_t before = gpu.memoryStats().systemAllocations;
  for (int i = 0; i < 10; ++i) step();
  EXPECT_EQ(gpu.memoryStats().systemAllocations, before);
  EXPECT_GT(gpu.memoryStats().peakAllocatedBytes, 0u);
}

TEST(CudaDevice, OutOfMemoryNamesTheTensor) {
  SKIP_WITHOUT_GPU();
  const std::string message = testing::errorMessage([] {
    Tensor::empty({int64_t{1} << 20, int64_t{1} << 20}, DType::Float32, cudaDevice());
  });
  testing::expectContains(message, "out of memory on cuda:0");
  testing::expectContains(message, "float32[1048576, 1048576]");
  // The device works afterwards.
  EXPECT_EQ(Tensor::full({2}, 1.0f, cudaDevice()).toVector(), (std::vector<float>{1, 1}));
}

TEST(CudaElementwise, MatchesTheCpu) {
  SKIP_WITHOUT_GPU();
  CudaDevice& gpu = cudaDevice();
  const Tensor a = randomTensor({33, 65}, 2), b = randomTensor({33, 65}, 3);
  const Tensor ga = a.to(gpu), gb = b.to(gpu);
  expectClose(cuda::add(ga, gb), cpu::add(a, b));
  expectClose(cuda::sub(ga, gb), cpu::sub(a, b));
  expectClose(cuda::mul(ga, gb), cpu::mul(a, b));
  expectClose(cuda::scale(ga, -1.5f), cpu::scale(a, -1.5f));
  const Tensor relu = cpu::reluForward(a);
  const Tensor gpuRelu = cuda::reluForward(ga);
  expectClose(gpuRelu, relu);
  expectClose(cuda::reluBackward(gb, gpuRelu), cpu::reluBackward(b, relu));
  Tensor accumulated = a.clone(), gpuAccumulated = ga.clone();
  cpu::axpyInPlace(accumulated, 0.25f, b);
  cuda::axpyInPlace(gpuAccumulated, 0.25f, gb);
  expectClose(gpuAccumulated, accumulated);
  const Tensor big = randomTensor({1 << 20}, 4);
  const float cpuSum = cpu::sumAll(big);
  EXPECT_NEAR(cuda::sumAll(big.to(gpu)), cpuSum, 1e-4f * std::max(1.0f, std::fabs(cpuSum)) + 1e-2f);
}

TEST(CudaElementwise, RowSumsAndRowBroadcast) {
  SKIP_WITHOUT_GPU();
  CudaDevice& gpu = cudaDevice();
  const Tensor m = randomTensor({37, 19}, 5), row = randomTensor({19}, 6);
  std::vector<float> sums(19, 0.0f), added = m.toVector();
  const std::vector<float> values = m.toVector(), r = row.toVector();
  for (int i = 0; i < 37; ++i) {
    for (int j = 0; j < 19; ++j) {
      sums[j] += values[i * 19 + j];
      added[i * 19 + j] += r[j];
    }
  }
  expectClose(cuda::sumRows(m.to(gpu)), Tensor::fromVector(sums, {19}));
  Tensor gm = m.to(gpu);
  cuda::addRowInPlace(gm, row.to(gpu));
  expectClose(gm, Tensor::fromVector(added, {37, 19}));
}

TEST(CudaGemm, MatchesTheCpuForEveryTransposition) {
  SKIP_WITHOUT_GPU();
  CudaDevice& gpu = cudaDevice();
  const int64_t m = 17, n = 23, k = 31;
  for (Transpose ta : {Transpose::No, Transpose::Yes}) {
    for (Transpose tb : {Transpose::No, Transpose::Yes}) {
      const Tensor a = randomTensor(ta == Transpose::Yes ? Shape{k, m} : Shape{m, k}, 7);
      const Tensor b = randomTensor(tb == Transpose::Yes ? Shape{n, k} : Shape{k, n}, 8);
      expectClose(cuda::gemm(a.to(gpu), b.to(gpu), ta, tb), cpu::gemm(a, b, ta, tb));
      Tensor c = randomTensor({m, n}, 9);
      Tensor gc = c.to(gpu);
      cpu::gemmInto(c, a, b, ta, tb, 0.5f, 1.0f);
      cuda::gemmInto(gc, a.to(gpu), b.to(gpu), ta, tb, 0.5f, 1.0f);
      expectClose(gc, c);
    }
  }
}

TEST(CudaSoftmaxCrossEntropy, MatchesTheCpu) {
  SKIP_WITHOUT_GPU();
  CudaDevice& gpu = cudaDevice();
  Tensor logits = randomTensor({13, 300}, 10);
  cpu::scaleInPlace(logits, 40.0f);  // large logits: the max subtraction must hold
  const Tensor labels = Tensor::fromVector(
      std::vector<int64_t>{0, 299, 5, 7, 100, 3, 3, 250, 1, 0, 42, 299, 17}, {13});
  const auto onCpu = cpu::softmaxCrossEntropyForward(logits, labels);
  const auto onGpu = cuda::softmaxCrossEntropyForward(logits.to(gpu), labels.to(gpu));
  EXPECT_NEAR(onGpu.loss, onCpu.loss, 1e-4f * std::max(1.0f, std::fabs(onCpu.loss)));
  expectClose(onGpu.probabilities, onCpu.probabilities);
  expectClose(cuda::softmaxCrossEntropyBackward(onGpu.probabilities, labels.to(gpu), 0.5f),
              cpu::softmaxCrossEntropyBackward(onCpu.probabilities, labels, 0.5f));
  const Tensor badLabels = Tensor::fromVector(std::vector<int64_t>(13, 300), {13});
  testing::expectContains(testing::errorMessage([&] {
                            cuda::softmaxCrossEntropyForward(logits.to(gpu), badLabels.to(gpu));
                          }),
                          "label 0 is 300");
}

// The op variants CUDA does not have yet refuse, naming the op and the device, instead of
// computing something wrong; crossEntropy with its default options takes the fused kernels and
// agrees with the CPU.
TEST(CudaNotYetImplemented, BroadcastingLogSoftmaxCrossEntropyOptionsAndAsymmetricConvRefuse) {
  SKIP_WITHOUT_GPU();
  CudaDevice& gpu = cudaDevice();
  autograd::Variable matrix(randomTensor({4, 3}, 20).to(gpu));
  autograd::Variable row(randomTensor({3}, 21).to(gpu));
  testing::expectContains(testing::errorMessage([&] { autograd::add(matrix, row); }),
                          "broadcasting add/sub/mul: not implemented on CUDA yet");
  testing::expectContains(testing::errorMessage([&] { autograd::logSoftmax(matrix, 1); }),
                          "logSoftmax: not implemented on CUDA yet");
  const Tensor labels = Tensor::fromVector(std::vector<int64_t>{0, 2, 1, 1}, {4});
  autograd::CrossEntropyOptions smoothed;
  smoothed.labelSmoothing = 0.1f;
  testing::expectContains(
      testing::errorMessage([&] { autograd::crossEntropy(matrix, labels.to(gpu), smoothed); }),
      "not implemented on CUDA yet");
  const float onGpu = autograd::crossEntropy(matrix, labels.to(gpu)).tensor().item();
  const float onCpu =
      autograd::crossEntropy(autograd::Variable(matrix.tensor().to(cpuDevice())), labels)
          .tensor()
          .item();
  EXPECT_NEAR(onGpu, onCpu, 1e-5f);
  autograd::Conv2dOptions asymmetric;
  asymmetric.paddingEnd = {{1, 0}};
  autograd::Variable images(randomTensor({1, 2, 5, 5}, 22).to(gpu));
  autograd::Variable filters(randomTensor({3, 2, 3, 3}, 23).to(gpu));
  testing::expectContains(testing::errorMessage([&] {
                            autograd::conv2d(images, filters, autograd::Variable(), asymmetric);
                          }),
                          "is not implemented on CUDA (cuDNN pads symmetrically)");
}

// A small MLP: linear -> relu -> linear -> loss, then SGD with Nesterov momentum and weight
// decay, for three steps on each device from the same weights; same parameters after. (Dropout
// draws its masks differently on each device: tests/cuda/pooling_lrn_dropout_test.cpp.)
TEST(CudaTraining, StepsMatchTheCpu) {
  SKIP_WITHOUT_GPU();
  CudaDevice& gpu = cudaDevice();
  struct Net {
    Variable w1, b1, w2, b2;
  };
  auto makeNet = [](Device& device) {
    return Net{Variable(randomTensor({32, 20}, 11).to(device), true),
               Variable(randomTensor({32}, 12).to(device), true),
               Variable(randomTensor({10, 32}, 13).to(device), true),
               Variable(randomTensor({10}, 14).to(device), true)};
  };
  Net onCpu = makeNet(cpuDevice()), onGpu = makeNet(gpu);
  const optim::SgdOptions options{0.05f, 0.9f, 0.0f, 1e-3f, true};
  optim::Sgd cpuSgd({onCpu.w1, onCpu.b1, onCpu.w2, onCpu.b2}, options);
  optim::Sgd gpuSgd({onGpu.w1, onGpu.b1, onGpu.w2, onGpu.b2}, options);
  const Tensor labels = Tensor::fromVector(std::vector<int64_t>{1, 4, 9, 0, 3, 3, 7, 2}, {8});
  for (int step = 0; step < 3; ++step) {
    const Tensor x = randomTensor({8, 20}, 100 + step);
    float losses[2];
    for (int onDevice = 0; onDevice < 2; ++onDevice) {
      Net& net = onDevice ? onGpu : onCpu;
      Device& device = onDevice ? static_cast<Device&>(gpu) : cpuDevice();
      Variable hidden = autograd::relu(autograd::linear(Variable(x.to(device)), net.w1, net.b1));
      Variable loss = autograd::softmaxCrossEntropy(autograd::linear(hidden, net.w2, net.b2),
                                                    labels.to(device));
      losses[onDevice] = loss.tensor().item();
      loss.backward();
      optim::Sgd& sgd = onDevice ? gpuSgd : cpuSgd;
      sgd.step();
      sgd.zeroGrad();
    }
    EXPECT_NEAR(losses[1], losses[0], 1e-4f * std::max(1.0f, losses[0])) << "step " << step;
  }
  expectClose(onGpu.w1.tensor(), onCpu.w1.tensor());
  expectClose(onGpu.b1.tensor(), onCpu.b1.tensor());
  expectClose(onGpu.w2.tensor(), onCpu.w2.tensor());
  expectClose(onGpu.b2.tensor(), onCpu.b2.tensor());
}

}  // namespace
}  // namespace imerge
