// Each strategy's belief (belief.h): the sources and defaults per strategy, the --belief flag's
// refusals, and the fits: MG-WFBP's 32 KiB-2 MiB line recovers a published a + bM exactly even
// when the cluster is flat below a knee, where a line over every sample does not.
#include "distributed/planning/belief.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "distributed/planning/cluster_profile.h"
#include "distributed/planning/measurement_sizes.h"
#include "distributed/planning/planner.h"
#include "support/error_text.h"

namespace imerge::distributed {
namespace {

using imerge::testing::errorMessage;
using imerge::testing::expectContains;

// `model` sampled at `workers` over imerge-commbench's sizes, 4 B to 256 MiB.
std::vector<CommSample> sampled(const CommModel& model, int workers) {
  std::vector<CommSample> samples;
  for (size_t bytes : sweepMeasurementSizes(4, size_t{256} << 20)) {
    samples.push_back({bytes, workers, model.seconds(bytes, workers)});
  }
  return samples;
}

// A copy, so that a belief returned as a temporary may be inspected; a zero line (and a
// failure) when the belief is not linear.
LinearCommModel asLinear(const std::shared_ptr<const CommModel>& model) {
  const auto* linear = dynamic_cast<const LinearCommModel*>(model.get());
  if (linear == nullptr) {
    ADD_FAILURE() << "not a line: " << model->describe();
    return LinearCommModel(0, 0);
  }
  return *linear;
}

TEST(BeliefSources, DefaultToWhatEachOriginalSystemDoes) {
  EXPECT_EQ(defaultBeliefSource("mgwfbp"), "linear-32k-2m");
  EXPECT_EQ(defaultBeliefSource("imerge"), "piecewise");
  EXPECT_EQ(defaultBeliefSource("imerge-overlap"), "piecewise");
  EXPECT_EQ(defaultBeliefSource("fusion"), "horovod-64mib");
  for (const std::string& strategy : strategyNames()) {
    if (strategy == "mgwfbp" || strategy == "imerge" || strategy == "imerge-overlap" ||
        strategy == "fusion")
      continue;
    EXPECT_EQ(beliefSourcesFor(strategy), std::vector<std::string>{"sizes-only"}) << strategy;
  }
  EXPECT_EQ(fusionThresholdBytes("horovod-64mib"), size_t{64} << 20);
  EXPECT_EQ(fusionThresholdBytes("horovod-128mib"), size_t{128} << 20);
  for (const std::string& strategy : strategyNames()) {
    for (const std::string& source : beliefSourcesFor(strategy)) {
      EXPECT_FALSE(describeBeliefSource(source).empty()) << source;
    }
  }
  expectContains(errorMessage([] { beliefSourcesFor("horovod"); }), "unknown strategy 'horovod'");
}

TEST(BeliefFlag, OverridesTheDefaultsAndRefusesBadEntriesNamingThem) {
  const auto chosen = parseBeliefFlag({"mgwfbp=linear-all", "imerge=truth"});
  EXPECT_EQ(chosen,
            (std::map<std::string, std::string>{{"imerge", "truth"}, {"mgwfbp", "linear-all"}}));

  expectContains(errorMessage([] { parseBeliefFlag({"mgwfbp"}); }),
                 "--belief mgwfbp: expected STRATEGY=SOURCE");
  expectContains(errorMessage([] { parseBeliefFlag({"ring=truth"}); }),
                 "--belief ring=truth: unknown strategy 'ring'");
  const std::string bogus = errorMessage([] { parseBeliefFlag({"mgwfbp=bogus"}); });
  expectContains(bogus, "--belief mgwfbp=bogus: 'bogus' is not a belief of mgwfbp");
  expectContains(bogus, "linear-32k-2m, linear-all, piecewise, truth");
  expectContains(errorMessage([] { parseBeliefFlag({"wfbp=truth"}); }), "it takes sizes-only");
  expectContains(errorMessage([] {
                   parseBeliefFlag({"imerge=truth", "imerge=piecewise"});
                 }),
                 "imerge was given a belief twice");
}

TEST(BeliefModel, MgwfbpsRangeRecoversThePublishedLineExactly) {
  const ClusterProfile tenGbE = builtInAlphaBetaProfiles().at("10GbE");
  for (int workers : {8, 16, 32}) {
    const auto belief = beliefModel("linear-32k-2m", sampled(tenGbE, workers), nullptr);
    const CommPiece published = tenGbE.piecesAt(workers).front();
    EXPECT_NEAR(asLinear(belief).alphaSeconds(), published.latencySeconds, 1e-12) << workers;
    EXPECT_NEAR(asLinear(belief).betaSecondsPerByte(), published.slopeSecondsPerByte, 1e-18)
        << workers;
  }
}

TEST(BeliefModel, MgwfbpsRangeIgnoresAKneeBelowItWhereALineOverEverySampleDoesNot) {
  // Flat 1 ms below 16 KiB (a startup the line above does not have), 50 us + M / 1 GB/s above.
  const PiecewiseCommModel truth(1e-3, {{16 << 10, 50e-6, 1e-9}});
  const auto samples = sampled(truth, 8);
  const LinearCommModel ranged = asLinear(beliefModel("linear-32k-2m", samples, nullptr));
  EXPECT_NEAR(ranged.alphaSeconds(), 50e-6, 1e-12);
  EXPECT_NEAR(ranged.betaSecondsPerByte(), 1e-9, 1e-18);
  const LinearCommModel everything = asLinear(beliefModel("linear-all", samples, nullptr));
  EXPECT_GT(std::abs(everything.alphaSeconds() - 50e-6), 10e-6) << everything.describe();
}

TEST(BeliefModel, TruthIsTheClusterItselfAndPiecewiseFollowsTheKnee) {
  auto truth = std::make_shared<PiecewiseCommModel>(
      1e-3, std::vector<PiecewiseCommModel::Segment>{{16 << 10, 50e-6, 1e-9}});
  const auto samples = sampled(*truth, 8);
  EXPECT_EQ(beliefModel("truth", samples, truth).get(), truth.get());
  expectContains(errorMessage([&] { beliefModel("truth", samples, nullptr); }),
                 "belief 'truth': no cluster cost");
  const auto piecewise = beliefModel("piecewise", samples, truth);
  for (size_t bytes : {size_t{4}, size_t{8} << 10, size_t{1} << 20, size_t{64} << 20}) {
    EXPECT_NEAR(piecewise->seconds(bytes, 8), truth->seconds(bytes, 8),
                0.01 * truth->seconds(bytes, 8))
        << bytes;
  }
}

TEST(BeliefModel, MgwfbpsRangeRefusesSamplesThatMissIt) {
  // Two sizes, both below 32 KiB: nothing to fit the line on.
  const std::vector<CommSample> small = {{1024, 8, 1e-4}, {4096, 8, 2e-4}};
  const std::string message = errorMessage([&] { beliefModel("linear-32k-2m", small, nullptr); });
  expectContains(message, "32 KiB to 2 MiB");
  expectContains(message, "0 distinct size(s)");
  // One size in range is still not a line.
  const std::vector<CommSample> one = {{1024, 8, 1e-4}, {65536, 8, 2e-4}, {65536, 8, 2.1e-4}};
  expectContains(errorMessage([&] { beliefModel("linear-32k-2m", one, nullptr); }),
                 "1 distinct size(s)");
  expectContains(errorMessage([&] { beliefModel("bogus", small, nullptr); }),
                 "unknown belief source 'bogus'");
}

}  // namespace
}  // namespace imerge::distributed
