// FLOP-derived compute profiles: the multiply-accumulates against torchvision's published
// figures, the refusals, and the IMerge claim simulated on the preset models' profiles.
#include "distributed/profiling/flops_profile.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <tuple>

#include "distributed/planning/cluster_catalog.h"
#include "distributed/planning/measurement_sizes.h"
#include "distributed/planning/planner.h"
#include "distributed/planning/simulator.h"
#include "models/registry.h"
#include "support/error_text.h"

namespace imerge::distributed {
namespace {

using imerge::testing::errorMessage;
using imerge::testing::expectContains;

// torchvision's forward multiply-accumulates at 224x224 (../shared/reference/model_tensors.csv).
TEST(ComputeProfile, CountsTheMacsTorchvisionPublishes) {
  for (const auto& [model, macs, tensors] :
       {std::tuple{"alexnet", 0.714e9, 16}, std::tuple{"resnet18", 1.814e9, 62}}) {
    auto network = models::buildModel(model, {.inChannels = 3, .classes = 1000});
    double total = 0;
    for (const LayerMacs& layer : countForwardMacs(*network, {3, 224, 224})) total += layer.macs;
    EXPECT_NEAR(total, macs, 0.01 * macs) << model;
    const ComputeProfile profile = profileFromFlops(*network, {3, 224, 224}, 2, 100.0);
    EXPECT_EQ(profile.tensors.size(), static_cast<size_t>(tensors)) << model;
    // Backward order: the classifier first, the first convolution last. Forward: 2 FLOPs per
    // MAC for 2 images at 100 GFLOP/s; backward twice that.
    EXPECT_EQ(profile.tensors.back().name.rfind(
                  model == std::string("alexnet") ? "features.0." : "conv1.", 0),
              0u)
        << profile.tensors.back().name;
    EXPECT_NEAR(profile.forwardSeconds(), 2 * 2 * total / 100e9, 1e-9);
    EXPECT_NEAR(profile.backwardSeconds(), 2 * profile.forwardSeconds(), 1e-9);
    // The model is left as it was: no pre-hook installed, training mode.
    EXPECT_TRUE(network->isTraining());
  }
}

TEST(ComputeProfile, FlopsProfileRefusesBadSpeed) {
  auto network =
      models::buildModel("small_cnn", {.inChannels = 1, .classes = 10, .smallImages = true});
  expectContains(errorMessage([&] { profileFromFlops(*network, {1, 28, 28}, 4, 0.0); }), "GFLOP/s");
  expectContains(errorMessage([&] {
                   profileFromFlops(*network, {1, 28, 28}, 0, 10.0);
                 }),
                 "batch per worker");
}

// ---- the IMerge claim on the preset models ----

TEST(Simulator, ImergeNeverSlowerOnPresetModelsWithFlatStartup) {
  // A fast device, so that communication matters; the default cluster, paper-small+10gbe: small
  // messages (below 32768 elements) cost a flat startup, larger ones MG-WFBP's 10GbE line.
  constexpr double kGigaflops = 10000;
  constexpr int64_t kBatch = 32;
  const ClusterProfile truth = loadCluster("paper-small+10gbe").truth();
  for (const std::string model : {"resnet18", "vgg16", "alexnet", "resnet50"}) {
    auto network = models::buildModel(model, {.inChannels = 3, .classes = 1000});
    const ComputeProfile profile = profileFromFlops(*network, {3, 224, 224}, kBatch, kGigaflops);
    for (int workers : {16, 32}) {
      // Beliefs fitted, as DataParallel fits them, from the truth sampled at the sweep sizes.
      std::vector<CommSample> samples;
      for (size_t bytes : sweepMeasurementSizes(4, size_t{256} << 20)) {
        samples.push_back({bytes, workers, truth.seconds(bytes, workers)});
      }
      std::map<std::string, double> seconds;
      for (const std::string& strategy : strategyNames()) {
        const auto belief = beliefModelFor(strategy, samples);
        const Plan plan = makePlanner(strategy, {})->plan(profile.tensors, *belief, workers);
        seconds[strategy] = simulate(plan, profile, truth, workers).iterationSeconds;
      }
      for (const std::string other : {"default", "wfbp", "fusion", "mgwfbp"}) {
        EXPECT_LE(seconds["imerge"], seconds[other] * (1 + 1e-9))
            << model << " at " << workers << " workers: imerge " << seconds["imerge"] << " s, "
            << other << " " << seconds[other] << " s";
      }
      std::printf(
          "%-9s %2d workers: imerge %.2f ms, mgwfbp %.2f ms, wfbp %.2f ms, fusion %.2f ms, "
          "default %.2f ms, priority %.2f ms\n",
          model.c_str(), workers, 1e3 * seconds["imerge"], 1e3 * seconds["mgwfbp"],
          1e3 * seconds["wfbp"], 1e3 * seconds["fusion"], 1e3 * seconds["default"],
          1e3 * seconds["priority"]);
    }
  }
}

}  // namespace
}  // namespace imerge::distributed
