// SGD against torch.optim.SGD (tests/reference/torch_optim.py) and its input checks.
#include "optim/sgd.h"

#include <gtest/gtest.h>

#include "support/compare.h"
#include "support/reference_data.h"

namespace imerge::optim {
namespace {

using autograd::Variable;

class SgdMatchesPyTorch : public ::testing::TestWithParam<std::string> {};

TEST_P(SgdMatchesPyTorch, ThreeSteps) {
  const auto reference = testing::loadReferenceCase("optim.json", GetParam());
  const auto& o = reference.options();
  SgdOptions options;
  options.learningRate = o.at("lr").get<float>();
  options.momentum = o.at("momentum").get<float>();
  options.dampening = o.at("dampening").get<float>();
  options.weightDecay = o.at("weight_decay").get<float>();
  options.nesterov = o.at("nesterov").get<bool>();

  Variable parameter(reference.tensor("start"), true);
  Sgd optimizer({parameter}, options);
  for (int step = 0; step < 3; ++step) {
    optimizer.zeroGrad();
    parameter.addGrad(reference.tensor("grad" + std::to_string(step)));
    optimizer.step();
    testing::expectAllClose(parameter.tensor(), reference.tensor("after" + std::to_string(step)),
                            1e-5f, 1e-6f, GetParam() + " after step " + std::to_string(step));
  }
}

INSTANTIATE_TEST_SUITE_P(Configurations, SgdMatchesPyTorch,
                         ::testing::Values("plain", "momentum", "nesterov", "weight_decay",
                                           "dampening"));

TEST(Sgd, LeavesParametersWithoutGradientUntouched) {
  Variable used(Tensor::full({3}, 1.0f), true);
  Variable unused(Tensor::full({3}, 1.0f), true);
  Sgd optimizer({used, unused}, {.learningRate = 0.5f, .momentum = 0.9f});
  used.addGrad(Tensor::full({3}, 2.0f));
  optimizer.step();
  EXPECT_FLOAT_EQ(used.tensor().toVector()[0], 0.0f);
  EXPECT_FLOAT_EQ(unused.tensor().toVector()[0], 1.0f);
}

TEST(Sgd, RejectsBadOptions) {
  Variable parameter(Tensor::zeros({2}), true);
  EXPECT_THROW(Sgd({parameter}, {.learningRate = -1.0f}), Error);
  EXPECT_THROW(Sgd({parameter}, {.learningRate = 0.1f, .nesterov = true}), Error);
}

}  // namespace
}  // namespace imerge::optim
