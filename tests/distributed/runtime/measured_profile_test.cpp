// The compute profile DataParallel measures during training (imerge-train --profile).
#include <gtest/gtest.h>

#include "autograd/ops/loss.h"
#include "distributed/planning/compute_profile.h"
#include "distributed/runtime/data_parallel.h"
#include "layers/layers.h"
#include "models/registry.h"
#include "optim/sgd.h"
#include "support/error_text.h"

namespace imerge::distributed {
namespace {

using imerge::testing::errorMessage;

// DataParallel's measured profile, in a world of one, for a FIFO strategy and for priority
// (whose forward pass applies the updates: they must count as optimizer, not forward, time).
TEST(ComputeProfile, MeasuredByDataParallel) {
  for (const std::string strategy : {"wfbp", "priority"}) {
    auto model =
        models::buildModel("small_cnn", {.inChannels = 1, .classes = 10, .smallImages = true});
    SingleProcessCommunicator world;
    DataParallelOptions options;
    options.strategy = strategy;
    options.warmupSteps = 2;
    DataParallel parallel(model, world, options);
    optim::Sgd optimizer(model->parameters(), {.learningRate = 0.01f});
    EXPECT_NE(errorMessage([&] { parallel.computeProfile(); }).find("no step has been profiled"),
              std::string::npos);
    Generator generator(3);
    for (int step = 0; step < 4; ++step) {
      Tensor images = Tensor::empty({8, 1, 28, 28});
      generator.fillNormal(images, 0.0f, 1.0f);
      const Tensor labels = Tensor::fromVector(std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7}, {8});
      parallel.backward(
          autograd::softmaxCrossEntropy(parallel.forward(autograd::Variable(images)), labels));
      parallel.step(optimizer);
    }
    parallel.synchronize();
    const ComputeProfile profile = parallel.computeProfile();
    const auto named = model->namedParameters();
    ASSERT_EQ(profile.tensors.size(), named.size()) << strategy;
    // Every parameter once, by its dotted name ("features.0.weight"), with its bytes.
    size_t bytes = 0;
    for (const TensorInfo& tensor : profile.tensors) {
      EXPECT_NE(tensor.name.find('.'), std::string::npos) << tensor.name;
      bytes += tensor.bytes;
    }
    EXPECT_EQ(bytes, static_cast<size_t>(model->parameterCount()) * 4);
    EXPECT_GT(profile.forwardSeconds(), 0) << strategy;
    EXPECT_GT(profile.backwardSeconds(), 0) << strategy;
    EXPECT_GT(profile.optimizerSeconds, 0) << strategy;
    validateComputeProfile(profile, strategy);
  }
}

}  // namespace
}  // namespace imerge::distributed
