// Ops pick their kernels by their inputs' device (core/backend.h's backendFor). What can be seen
// without a GPU: inputs on two devices are refused with an error naming the op and both
// devices, every op asks the device of its inputs for its kernels, never the CPU's, and CPU
// tensors run the CPU backend's. A host-backed device that reports DeviceType::CUDA stands in
// for the GPU; its backend refuses every kernel, naming it (support/refusing_backend.h).
#include <gtest/gtest.h>

#include <functional>

#include "autograd/autograd.h"
#include "core/backend.h"
#include "core/cpu/cpu_backend.h"
#include "optim/sgd.h"
#include "support/error_text.h"
#include "support/fake_device.h"

namespace imerge::autograd {
namespace {

using imerge::testing::errorMessage;
using imerge::testing::expectContains;

imerge::testing::HostBackedDevice& fakeGpu() {
  static auto* device = new imerge::testing::HostBackedDevice(DeviceType::CUDA, "fake-cuda:0");
  return *device;
}

// A tensor of `shape` with ones in it on the fake GPU (copied from the host: filling on a CUDA
// device would launch a kernel).
Tensor onFakeGpu(const Shape& shape, DType dtype = DType::Float32) {
  Tensor host = Tensor::zeros(shape, dtype);
  if (dtype == DType::Float32) host.fill(1.0f);
  Tensor moved = host.to(fakeGpu());
  EXPECT_EQ(&moved.device(), &fakeGpu());
  return moved;
}

void expectMixedDeviceError(const std::string& message, const std::string& op) {
  expectContains(message, op + ": inputs are on different devices");
  expectContains(message, "cpu");
  expectContains(message, "fake-cuda:0");
}

TEST(DeviceDispatch, BinaryOpsRefuseInputsOnTwoDevices) {
  Variable onCpu(Tensor::full({2, 3}, 1.0f));
  Variable onGpu(onFakeGpu({2, 3}));
  expectMixedDeviceError(errorMessage([&] { add(onCpu, onGpu); }), "add");
  expectMixedDeviceError(errorMessage([&] { sub(onGpu, onCpu); }), "sub");
  expectMixedDeviceError(errorMessage([&] { mul(onCpu, onGpu); }), "mul");
}

TEST(DeviceDispatch, MatrixOpsRefuseInputsOnTwoDevices) {
  Variable x(Tensor::full({4, 3}, 1.0f));
  Variable w(onFakeGpu({5, 3}));
  Variable b(Tensor::zeros({5}));
  expectMixedDeviceError(errorMessage([&] { linear(x, w, b); }), "linear");
  Variable wOnCpu(Tensor::full({5, 3}, 1.0f));
  Variable bOnGpu(onFakeGpu({5}));
  expectMixedDeviceError(errorMessage([&] { linear(x, wOnCpu, bOnGpu); }), "linear");
  Variable m(onFakeGpu({3, 2}));
  expectMixedDeviceError(errorMessage([&] { matmul(x, m); }), "matmul");
}

TEST(DeviceDispatch, LossRefusesLabelsOnAnotherDevice) {
  Variable logits(onFakeGpu({2, 4}));
  const Tensor labels = Tensor::fromVector(std::vector<int64_t>{1, 3}, {2});
  expectMixedDeviceError(errorMessage([&] { softmaxCrossEntropy(logits, labels); }),
                         "softmaxCrossEntropy");
}

TEST(DeviceDispatch, SgdRefusesAGradientOnAnotherDevice) {
  Variable weight(onFakeGpu({3}), true);
  optim::Sgd sgd({weight}, optim::SgdOptions{});
  expectMixedDeviceError(errorMessage([&] { sgd.stepParameter(0, Tensor::zeros({3}), 0.1f); }),
                         "SGD");
}

// The fake GPU's memory is host memory, so a CPU kernel would run on it and succeed: the fake
// device's backend refusing `kernel` shows that the op asked its inputs' device for it.
void expectCudaPath(const std::function<void()>& op, const std::string& kernel) {
  const std::string message = errorMessage(op);
  expectContains(message, "kernel " + kernel + " asked of fake-cuda:0");
}

TEST(DeviceDispatch, EveryLayerOpTakesItsCudaPathForCudaTensors) {
  Variable images(onFakeGpu({2, 2, 4, 4}));
  expectCudaPath([&] { maxPool2d(images, Pool2dOptions{}); }, "maxPool2dForward");
  expectCudaPath([&] { avgPool2d(images, Pool2dOptions{}); }, "avgPool2dForward");
  expectCudaPath([&] { adaptiveAvgPool2d(images, {1, 1}); }, "adaptiveAvgPool2dForward");
  Variable filters(onFakeGpu({3, 2, 3, 3}));
  expectCudaPath([&] { conv2d(images, filters, Variable(), Conv2dOptions{}); }, "conv2dForward");
  Tensor mean = onFakeGpu({2}), variance = onFakeGpu({2});
  expectCudaPath(
      [&] { batchNorm2d(images, Variable(), Variable(), mean, variance, BatchNormOptions{}); },
      "batchNormTrainingForward");
  BatchNormOptions evaluation;
  evaluation.training = false;
  expectCudaPath([&] { batchNorm2d(images, Variable(), Variable(), mean, variance, evaluation); },
                 "batchNormInferenceForward");
  expectCudaPath([&] { localResponseNorm(images, 3, 1e-4f, 0.75f, 1.0f); }, "lrnForward");
  expectCudaPath([&] { dropout(images, 0.5f, /*training=*/true); }, "dropoutMask");
}

TEST(DeviceDispatch, ElementwiseLinearLossAndSgdAskTheirDevice) {
  Variable a(onFakeGpu({2, 3}));
  Variable b(onFakeGpu({2, 3}));
  expectCudaPath([&] { add(a, b); }, "add");
  expectCudaPath([&] { relu(a); }, "reluForward");
  expectCudaPath([&] { sum(a); }, "sumAll");
  Variable w(onFakeGpu({4, 3}));
  expectCudaPath([&] { linear(a, w, Variable()); }, "linearForward");
  Variable m(onFakeGpu({3, 2}));
  expectCudaPath([&] { matmul(a, m); }, "gemm");
  const Tensor labels = Tensor::fromVector(std::vector<int64_t>{1, 2}, {2}).to(fakeGpu());
  expectCudaPath([&] { softmaxCrossEntropy(a, labels); }, "softmaxCrossEntropyForward");
  Variable weight(onFakeGpu({3}), true);
  optim::Sgd sgd({weight}, optim::SgdOptions{});
  expectCudaPath([&] { sgd.stepParameter(0, onFakeGpu({3}), 0.1f); }, "sgdUpdate");
}

TEST(DeviceDispatch, BroadcastingLogSoftmaxAndCrossEntropyAskTheirDevice) {
  Variable a(onFakeGpu({2, 3}));
  Variable row(onFakeGpu({3}));
  // Equal shapes take the plain kernel; only different ones the broadcasting one.
  expectCudaPath([&] { add(a, a); }, "add");
  expectCudaPath([&] { add(a, row); }, "broadcastBinary");
  expectCudaPath([&] { mul(row, a); }, "broadcastBinary");
  expectCudaPath([&] { sub(a, row); }, "broadcastBinary");
  // Shapes that cannot broadcast are refused before any device is asked, in the same words.
  expectContains(errorMessage([&] { add(a, Variable(onFakeGpu({4}))); }),
                 "add: the size of tensor a (3) must match the size of tensor b (4)");
  expectCudaPath([&] { logSoftmax(a, -1); }, "logSoftmaxForward");
  const Tensor labels = Tensor::fromVector(std::vector<int64_t>{1, 2}, {2}).to(fakeGpu());
  // The default options take the fused kernel; any other option logSoftmax first.
  expectCudaPath([&] { crossEntropy(a, labels); }, "softmaxCrossEntropyForward");
  CrossEntropyOptions summed;
  summed.reduction = Reduction::Sum;
  expectCudaPath([&] { crossEntropy(a, labels, summed); }, "logSoftmaxForward");
  const Tensor ignoring = Tensor::fromVector(std::vector<int64_t>{1, -100}, {2}).to(fakeGpu());
  expectCudaPath([&] { crossEntropy(a, ignoring); }, "logSoftmaxForward");
}

TEST(DeviceDispatch, TheCpuDeviceNamesTheCpuBackend) {
  EXPECT_EQ(&cpuDevice().backend(), &cpuBackend());
  const Tensor t = Tensor::full({2}, 1.0f);
  EXPECT_EQ(&backendFor("test", t, t), &cpuBackend());
  EXPECT_EQ(&fakeGpu().backend(), &backendFor("test", onFakeGpu({2})));
  EXPECT_NE(&fakeGpu().backend(), &cpuBackend());
}

TEST(DeviceDispatch, ConvolutionRefusesWeightsOnAnotherDevice) {
  Variable images(Tensor::full({1, 2, 4, 4}, 1.0f));
  Variable filters(onFakeGpu({3, 2, 3, 3}));
  expectMixedDeviceError(
      errorMessage([&] { conv2d(images, filters, Variable(), Conv2dOptions{}); }), "conv2d");
}

TEST(DeviceDispatch, CpuTensorsStillRunTheCpuKernels) {
  Variable a(Tensor::fromVector(std::vector<float>{1, -2, 3}, {3}), true);
  Variable b(Tensor::fromVector(std::vector<float>{4, 5, -6}, {3}));
  Variable loss = sum(relu(add(a, b)));
  EXPECT_FLOAT_EQ(loss.tensor().item(), 5 + 3);
  loss.backward();
  EXPECT_EQ(a.grad().toVector(), (std::vector<float>{1, 1, 0}));
  EXPECT_EQ(&a.grad().device(), &cpuDevice());
}

TEST(DeviceDispatch, TensorToTheSameDeviceIsNoCopy) {
  Tensor t = Tensor::full({4}, 2.0f);
  EXPECT_TRUE(t.to(cpuDevice()).sharesStorageWith(t));
  Tensor there = t.to(fakeGpu());
  EXPECT_FALSE(there.sharesStorageWith(t));
  EXPECT_EQ(there.toVector(), t.toVector());
  EXPECT_EQ(there.to(cpuDevice()).toVector(), (std::vector<float>{2, 2, 2, 2}));
}

}  // namespace
}  // namespace imerge::autograd
