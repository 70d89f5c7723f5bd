// Module bookkeeping: dotted names, buffers, train/eval, Sequential order; initialisers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "layers/layers.h"
#include "support/compare.h"
#include "support/error_text.h"
#include "support/fake_device.h"

namespace imerge::layers {
namespace {

std::shared_ptr<Sequential> smallNet() {
  auto net = std::make_shared<Sequential>();
  net->add(std::make_shared<Conv2d>(1, 4, 3, 1, 1));
  net->add(std::make_shared<BatchNorm2d>(4));
  net->add(std::make_shared<ReLU>());
  net->add(std::make_shared<MaxPool2d>(2));
  net->add(std::make_shared<Flatten>());
  net->add(std::make_shared<Linear>(4 * 4 * 4, 10));
  return net;
}

TEST(Module, NamesParametersAndBuffersByDottedPath) {
  auto net = smallNet();
  std::vector<std::string> names;
  for (auto& [name, parameter] : net->namedParameters()) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"0.weight", "0.bias", "1.weight", "1.bias", "5.weight",
                                             "5.bias"}));
  std::vector<std::string> buffers;
  for (auto& [name, buffer] : net->namedBuffers()) buffers.push_back(name);
  EXPECT_EQ(buffers,
            (std::vector<std::string>{"1.running_mean", "1.running_var", "1.num_batches_tracked"}));
  EXPECT_EQ(net->parameterCount(), 4 * 9 + 4 + 4 + 4 + 64 * 10 + 10);
}

TEST(Module, TrainAndEvalReachEveryChild) {
  auto net = smallNet();
  net->eval();
  for (auto& [name, child] : net->children()) EXPECT_FALSE(child->isTraining()) << name;
  net->train();
  for (auto& [name, child] : net->children()) EXPECT_TRUE(child->isTraining()) << name;
}

TEST(Module, ForwardAndBackwardReachEveryParameter) {
  auto net = smallNet();
  autograd::Variable input(Tensor::full({2, 1, 8, 8}, 0.5f));
  autograd::Variable loss = autograd::softmaxCrossEntropy(
      net->forward(input), Tensor::fromVector(std::vector<int64_t>{3, 7}, {2}));
  loss.backward();
  for (auto& [name, parameter] : net->namedParameters()) EXPECT_TRUE(parameter.hasGrad()) << name;
  net->zeroGrad();
  for (auto& [name, parameter] : net->namedParameters()) EXPECT_FALSE(parameter.hasGrad()) << name;
}

// Host memory behind a device of type CUDA: Module::to only copies, so its moves can be seen
// without a GPU.
imerge::testing::HostBackedDevice& fakeGpu() {
  static auto* device = new imerge::testing::HostBackedDevice(DeviceType::CUDA, "fake-cuda:0");
  return *device;
}

TEST(Module, ToMovesParametersAndFloatBuffersInPlace) {
  auto net = smallNet();
  std::map<std::string, std::vector<float>> before;
  for (auto& [name, parameter] : net->namedParameters()) {
    before[name] = parameter.tensor().toVector();
  }
  const std::vector<Variable> held = net->parameters();  // as an optimizer holds them
  autograd::Variable loss =
      autograd::sum(net->forward(autograd::Variable(Tensor::full({2, 1, 8, 8}, 0.5f))));
  loss.backward();
  EXPECT_EQ(&net->device(), &cpuDevice());

  net->to(fakeGpu());
  EXPECT_EQ(&net->device(), &fakeGpu());
  const auto parameters = net->namedParameters();
  for (size_t i = 0; i < parameters.size(); ++i) {
    const auto& [name, parameter] = parameters[i];
    EXPECT_EQ(&parameter.tensor().device(), &fakeGpu()) << name;
    EXPECT_EQ(parameter.tensor().toVector(), before[name]) << name;
    EXPECT_FALSE(parameter.hasGrad()) << name << ": a gradient on the old device was kept";
    EXPECT_EQ(&held[i].tensor().device(), &fakeGpu()) << name << " moved for the module only";
  }
  for (auto& [name, buffer] : net->namedBuffers()) {
    // The batch counter is counted in on the host by BatchNorm2d::forward.
    Device& expected =
        buffer.dtype() == DType::Float32 ? static_cast<Device&>(fakeGpu()) : cpuDevice();
    EXPECT_EQ(&buffer.device(), &expected) << name;
  }
  net->to(cpuDevice());
  for (auto& [name, parameter] : net->namedParameters()) {
    EXPECT_EQ(&parameter.tensor().device(), &cpuDevice()) << name;
    EXPECT_EQ(parameter.tensor().toVector(), before[name]) << name;
  }
}

TEST(Init, KaimingNormalHasTheRightSpread) {
  Generator generator(7);
  Tensor weight = Tensor::empty({256, 128, 3, 3});
  init::kaimingNormal(weight, generator);
  double sum = 0, squares = 0;
  for (float v : weight.toVector()) {
    sum += v;
    squares += v * v;
  }
  const double n = static_cast<double>(weight.numel());
  const double expectedStd = std::sqrt(2.0 / (128 * 9));
  EXPECT_NEAR(sum / n, 0.0, 0.01 * expectedStd);
  EXPECT_NEAR(std::sqrt(squares / n), expectedStd, 0.01 * expectedStd);
}

TEST(Init, DefaultLayerInitStaysInsidePyTorchsBound) {
  Generator generator(3);
  Linear layer(50, 20, true, generator);
  const float bound = 1.0f / std::sqrt(50.0f);
  std::vector<float> values = layer.weight().tensor().toVector();
  const std::vector<float> bias = layer.bias().tensor().toVector();
  values.insert(values.end(), bias.begin(), bias.end());
  // Uniform in [-bound, bound]: every value inside (a NaN is not), the largest near the edge.
  const std::vector<float> zeros(values.size(), 0.0f);
  EXPECT_TRUE(testing::allClose(values, zeros, 0.0, bound, "Linear(50, 20) weight and bias"));
  float largest = 0;
  for (float v : values) largest = std::max(largest, std::fabs(v));
  EXPECT_GT(largest, 0.9f * bound);
}

TEST(Init, SameSeedSameWeights) {
  Generator first(11), second(11);
  Conv2d a(3, 8, 3, 1, 1, true, first), b(3, 8, 3, 1, 1, true, second);
  EXPECT_EQ(a.weight().tensor().toVector(), b.weight().tensor().toVector());
}

TEST(Module, RejectsBadConfigurations) {
  Conv2dConfig grouped;
  grouped.inChannels = 3;
  grouped.outChannels = 8;
  grouped.options.groups = 2;
  // 3 input channels cannot be split into 2 groups.
  testing::expectContains(testing::errorMessage([&] { Conv2d layer(grouped); }), "groups 2");
  EXPECT_THROW(Linear(0, 4), Error);
  EXPECT_THROW(Dropout(1.0f), Error);
  EXPECT_THROW(MaxPool2d(2, 2, 3), Error);
}

}  // namespace
}  // namespace imerge::layers
