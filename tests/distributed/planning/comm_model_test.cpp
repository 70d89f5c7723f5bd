// Communication models: the linear and piecewise models' values and texts, fitting on
// synthetic data whose answer is known, fit errors, the belief model of each strategy, and the
// samples CSV (round trip and every refusal naming file, line and field).
#include "distributed/planning/comm_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "distributed/planning/measurement_sizes.h"
#include "distributed/planning/planner.h"
#include "support/error_text.h"
#include "support/temp_dir.h"

namespace imerge::distributed {
namespace {

using imerge::testing::errorMessage;
using imerge::testing::expectContains;
using imerge::testing::TempDir;

// Powers of two and the sizes halfway between them (in the logarithm): 4 B .. 64 MiB.
std::vector<size_t> sweepSizes() {
  std::vector<size_t> sizes;
  for (int power = 2; power <= 26; ++power) {
    sizes.push_back(size_t{1} << power);
    if (power < 26) sizes.push_back(size_t{3} << (power - 1));
  }
  return sizes;
}

// The knee the fit must find: 30 us flat below 8 KiB, 60 us + M / 1 GB/s up to 512 KiB, then
// a steeper -200 us + M / 0.5 GB/s (a jump at each breakpoint, as when MPI switches
// algorithms).
const PiecewiseCommModel& kneeTruth() {
  static const PiecewiseCommModel truth(30e-6, {{8192, 60e-6, 1e-9}, {512 * 1024, -200e-6, 2e-9}});
  return truth;
}

// Three repetitions per size, each off by a relative N(0, noise) error.
std::vector<CommSample> samplesOf(const CommModel& truth, double noise, unsigned seed) {
  std::mt19937 random(seed);
  std::normal_distribution<double> relativeError(0, noise);
  std::vector<CommSample> samples;
  for (size_t bytes : sweepSizes()) {
    for (int repeat = 0; repeat < 3; ++repeat) {
      const double factor = noise > 0 ? 1 + relativeError(random) : 1;
      samples.push_back({bytes, 4, truth.seconds(bytes, 4) * factor});
    }
  }
  return samples;
}

// ---- the models ----

TEST(LinearCommModel, ChargesStartupPlusBytesOverBandwidth) {
  const LinearCommModel model(12.1e-6, 1 / 5.3e9);
  EXPECT_DOUBLE_EQ(model.seconds(0, 1), 12.1e-6);
  EXPECT_DOUBLE_EQ(model.seconds(5'300'000'000, 8), 12.1e-6 + 1.0);
  EXPECT_EQ(model.alphaSeconds(), 12.1e-6);
  EXPECT_EQ(model.betaSecondsPerByte(), 1 / 5.3e9);
  EXPECT_EQ(model.describe(), "linear: 12.1 us + M / 5.30 GB/s");
  EXPECT_EQ(LinearCommModel(2.55e-6, 9.84e-11).describe(), "linear: 2.55 us + M / 10.2 GB/s");
  EXPECT_EQ(LinearCommModel(0.25, 0).describe(), "linear: 250 ms at any size");
}

TEST(LinearCommModel, RefusesNegativeParametersAndWorkers) {
  expectContains(errorMessage([] { LinearCommModel(-1e-6, 1e-9); }), "startup -1e-06 s");
  expectContains(errorMessage([] { LinearCommModel(1e-6, -1e-9); }), "per byte");
  expectContains(errorMessage([] { LinearCommModel(1e-6, 1e-9).seconds(8, 0); }),
                 "workers must be at least 1, not 0");
}

TEST(PiecewiseCommModel, IsFlatBelowTheFirstBreakpointAndLinearAbove) {
  const PiecewiseCommModel& model = kneeTruth();
  EXPECT_DOUBLE_EQ(model.seconds(4, 2), 30e-6);
  EXPECT_DOUBLE_EQ(model.seconds(8191, 2), 30e-6);
  EXPECT_DOUBLE_EQ(model.seconds(8192, 2), 60e-6 + 8192e-9);
  EXPECT_DOUBLE_EQ(model.seconds(512 * 1024 - 1, 2), 60e-6 + (512 * 1024 - 1) * 1e-9);
  EXPECT_DOUBLE_EQ(model.seconds(512 * 1024, 2), -200e-6 + 512 * 1024 * 2e-9);
  EXPECT_EQ(model.breakpointBytes(), (std::vector<size_t>{8192, 512 * 1024}));
  EXPECT_EQ(model.flatSeconds(), 30e-6);
  ASSERT_EQ(model.segments().size(), 2u);
  EXPECT_EQ(model.segments()[1].slopeSecondsPerByte, 2e-9);
  EXPECT_EQ(model.describe(),
            "piecewise: 30.0 us below 8 KiB; 60.0 us + M / 1.00 GB/s from 8 KiB; "
            "-200 us + M / 500 MB/s from 512 KiB");
  EXPECT_EQ(PiecewiseCommModel(1e-3, {}).seconds(size_t{1} << 30, 1), 1e-3);
}

TEST(PiecewiseCommModel, RefusesMalformedSegments) {
  using Segment = PiecewiseCommModel::Segment;
  expectContains(errorMessage([] { PiecewiseCommModel(-1, {}); }), "flat cost -1 s");
  expectContains(errorMessage([] {
                   PiecewiseCommModel(1e-5, {{8192, 0, 1e-9}, {4096, 0, 1e-9}});
                 }),
                 "segment 1 starts at 4096 bytes");
  expectContains(errorMessage([] {
                   PiecewiseCommModel(1e-5, {Segment{0, 1e-5, 1e-9}});
                 }),
                 "segment 0 starts at 0 bytes");
  expectContains(errorMessage([] {
                   PiecewiseCommModel(1e-5, {{8192, 1e-5, -1e-9}});
                 }),
                 "segment 0 has slope -1e-09");
  expectContains(errorMessage([] {
                   PiecewiseCommModel(1e-5, {{8192, -1e-3, 1e-9}});
                 }),
                 "costs must not be negative");
}

// ---- fitting ----

TEST(FitLinear, RecoversStartupAndBandwidthFromExactData) {
  const LinearCommModel truth(12.1e-6, 1 / 5.3e9);
  const LinearCommModel fitted = fitLinear(samplesOf(truth, 0, 1));
  EXPECT_NEAR(fitted.alphaSeconds(), 12.1e-6, 1e-12);
  EXPECT_NEAR(fitted.betaSecondsPerByte() * 5.3e9, 1.0, 1e-9);
  EXPECT_LT(fitError(fitted, samplesOf(truth, 0, 1)), 1e-7);
}

TEST(FitLinear, KeepsTheStartupFromGoingNegative) {
  // Unconstrained least squares on (1000, 10 us), (2000, 10 us), (3000, 100 us) gives
  // -50 us + 45 ns/B. With alpha >= 0 the best line goes through the origin:
  // beta = sum(x y) / sum(x^2) = 0.33 / 14e6 s/B (squared error 2.4e-9 s^2, below the best
  // constant's 5.4e-9).
  const std::vector<CommSample> samples = {{1000, 1, 10e-6}, {2000, 1, 10e-6}, {3000, 1, 100e-6}};
  const LinearCommModel fitted = fitLinear(samples);
  EXPECT_EQ(fitted.alphaSeconds(), 0.0);
  EXPECT_NEAR(fitted.betaSecondsPerByte(), 0.33 / 14e6, 1e-20);
}

TEST(FitLinear, RefusesSamplesItCannotFit) {
  expectContains(errorMessage([] { fitLinear({}); }), "no samples");
  expectContains(errorMessage([] {
                   fitLinear({{1024, 2, 1e-5}, {1024, 2, 2e-5}});
                 }),
                 "one size (1024 bytes)");
  expectContains(errorMessage([] {
                   fitLinear({{1024, 2, 1e-5}, {2048, 4, 2e-5}});
                 }),
                 "mix worker counts 2 and 4");
  expectContains(errorMessage([] {
                   fitLinear({{1024, 2, 1e-5}, {2048, 2, 0}});
                 }),
                 "sample 1 (2048 bytes) has time 0 s");
  expectContains(errorMessage([] {
                   fitLinear({{1024, 0, 1e-5}, {2048, 0, 2e-5}});
                 }),
                 "has 0 workers");
}

TEST(FitPiecewise, RecoversExactKneeData) {
  const auto samples = samplesOf(kneeTruth(), 0, 1);
  const PiecewiseCommModel fitted = fitPiecewise(samples);
  EXPECT_EQ(fitted.breakpointBytes(), (std::vector<size_t>{8192, 512 * 1024}));
  EXPECT_NEAR(fitted.flatSeconds(), 30e-6, 1e-15);
  EXPECT_NEAR(fitted.segments()[0].interceptSeconds, 60e-6, 1e-12);
  EXPECT_NEAR(fitted.segments()[0].slopeSecondsPerByte, 1e-9, 1e-18);
  EXPECT_NEAR(fitted.segments()[1].interceptSeconds, -200e-6, 1e-12);
  EXPECT_NEAR(fitted.segments()[1].slopeSecondsPerByte, 2e-9, 1e-18);
  EXPECT_LT(fitError(fitted, samples), 1e-9);
}

TEST(FitPiecewise, RecoversTheBreakpointsFromNoisyData) {
  for (unsigned seed : {1u, 2u, 3u}) {
    const auto samples = samplesOf(kneeTruth(), 0.005, seed);  // 0.5% timing noise
    const PiecewiseCommModel fitted = fitPiecewise(samples);
    EXPECT_EQ(fitted.breakpointBytes(), (std::vector<size_t>{8192, 512 * 1024})) << seed;
    ASSERT_EQ(fitted.segments().size(), 2u);
    EXPECT_NEAR(fitted.flatSeconds(), 30e-6, 0.3e-6) << seed;
    EXPECT_NEAR(fitted.segments()[0].slopeSecondsPerByte, 1e-9, 0.03e-9) << seed;
    EXPECT_NEAR(fitted.segments()[0].interceptSeconds, 60e-6, 2e-6) << seed;
    EXPECT_NEAR(fitted.segments()[1].slopeSecondsPerByte, 2e-9, 0.03e-9) << seed;
    EXPECT_LT(fitError(fitted, samples), 0.01) << seed;
  }
}

TEST(FitPiecewise, FitsKneeShapedDataFarBetterThanALine) {
  const auto samples = samplesOf(kneeTruth(), 0.005, 4);
  const double piecewiseError = fitError(fitPiecewise(samples), samples);
  const double linearError = fitError(fitLinear(samples), samples);
  EXPECT_LT(piecewiseError, 0.01);
  // The line is fitted where the big messages are and misjudges the small ones many times over.
  // Measured: 0.005 (the noise) against 0.68 (the line's startup is clamped at 0, so every
  // small message is predicted nearly free).
  EXPECT_GT(linearError, 0.5);
  EXPECT_LT(piecewiseError * 50, linearError);
}

TEST(FitPiecewise, WithTwoSegmentsFindsOneKnee) {
  const PiecewiseCommModel truth(30e-6, {{16384, 50e-6, 1e-9}});
  const auto samples = samplesOf(truth, 0, 1);
  const PiecewiseCommModel fitted = fitPiecewise(samples, 2);
  EXPECT_EQ(fitted.breakpointBytes(), std::vector<size_t>{16384});
  EXPECT_LT(fitError(fitted, samples), 1e-9);
}

TEST(FitPiecewise, ExactTwoSegmentDataKeepsTwoSegments) {
  // The IMerge paper's 8-node cost (20 us flat, then 97.5 us + M / 3.27 GB/s from 128 KiB, 56Gb IB)
  // at imerge-commbench's sizes. A third segment fits these samples exactly too, bridging 90.5 to
  // 128 KiB with a steep line that charged 110 KiB 81 us; fewer segments must win the tie.
  const PiecewiseCommModel truth(20e-6, {{131072, 9.75e-5, 3.06e-10}});
  std::vector<CommSample> samples;
  for (size_t bytes : sweepMeasurementSizes(4, size_t{256} << 20)) {
    samples.push_back({bytes, 8, truth.seconds(bytes, 8)});
  }
  const PiecewiseCommModel fitted = fitPiecewise(samples);
  EXPECT_EQ(fitted.breakpointBytes(), std::vector<size_t>{131072}) << fitted.describe();
  EXPECT_NEAR(fitted.seconds(110 << 10, 8), 20e-6, 1e-9);
}

TEST(FitPiecewise, ClampsADecreasingSegmentToAConstant) {
  // 10 us at 4 and 8 B, then 20, 19, 18 us: the best line over the last three slopes down,
  // which would make huge messages free; the fit takes their weighted mean instead.
  const std::vector<CommSample> samples = {
      {4, 1, 10e-6}, {8, 1, 10e-6}, {16, 1, 20e-6}, {32, 1, 19e-6}, {64, 1, 18e-6}};
  const PiecewiseCommModel fitted = fitPiecewise(samples, 2);
  EXPECT_EQ(fitted.breakpointBytes(), std::vector<size_t>{16});
  EXPECT_NEAR(fitted.flatSeconds(), 10e-6, 1e-15);
  EXPECT_EQ(fitted.segments()[0].slopeSecondsPerByte, 0.0);
  // sum(1/y) / sum(1/y^2): the constant with the least squared relative error.
  const double inverse = 1 / 20e-6 + 1 / 19e-6 + 1 / 18e-6;
  const double inverseSquared = 1 / (20e-6 * 20e-6) + 1 / (19e-6 * 19e-6) + 1 / (18e-6 * 18e-6);
  EXPECT_NEAR(fitted.segments()[0].interceptSeconds, inverse / inverseSquared, 1e-15);
  EXPECT_GT(fitted.seconds(size_t{1} << 30, 1), 18e-6);
}

TEST(FitPiecewise, RefusesTooFewSizesOrSegments) {
  const std::vector<CommSample> twoSizes = {{8, 1, 1e-5}, {16, 1, 1e-5}, {16, 1, 1.1e-5}};
  expectContains(errorMessage([&] { fitPiecewise(twoSizes); }), "2 distinct sizes");
  const auto samples = samplesOf(kneeTruth(), 0, 1);
  expectContains(errorMessage([&] { fitPiecewise(samples, 1); }), "maxSegments is 1");
  auto mixed = samples;
  mixed.back().workers = 8;
  expectContains(errorMessage([&] { fitPiecewise(mixed); }), "mix worker counts 4 and 8");
}

TEST(FitError, IsTheRootMeanSquareRelativeError) {
  // Relative errors 0 and (1 - 2) / 2 = -0.5: sqrt((0 + 0.25) / 2).
  const LinearCommModel model(1, 0);
  EXPECT_DOUBLE_EQ(fitError(model, {{8, 1, 1.0}, {16, 1, 2.0}}), std::sqrt(0.125));
  expectContains(errorMessage([&] { fitError(model, {}); }), "no samples");
}

TEST(BeliefModel, IsPiecewiseForImergeAndLinearForTheOthers) {
  const auto samples = samplesOf(kneeTruth(), 0, 1);
  for (const std::string strategy : {"default", "wfbp", "fusion", "priority", "mgwfbp"}) {
    const auto model = beliefModelFor(strategy, samples);
    ASSERT_NE(dynamic_cast<const LinearCommModel*>(model.get()), nullptr) << strategy;
  }
  const auto imerge = beliefModelFor("imerge", samples);
  const auto* piecewise = dynamic_cast<const PiecewiseCommModel*>(imerge.get());
  ASSERT_NE(piecewise, nullptr);
  EXPECT_EQ(piecewise->breakpointBytes(), (std::vector<size_t>{8192, 512 * 1024}));
  const std::string message = errorMessage([&] { beliefModelFor("bytescheduler", samples); });
  expectContains(message, "'bytescheduler'");
  expectContains(message, "mgwfbp, imerge");
}

// ---- CSV ----

class CommSamplesCsv : public ::testing::Test {
 protected:
  TempDir dir{"comm-samples-csv"};

  std::string write(const std::string& name, const std::string& text) const {
    const std::string path = (dir.path() / name).string();
    std::ofstream(path) << text;
    return path;
  }
  // The refusal for a file holding `text`, checked to name the file.
  std::string refusal(const std::string& text) const {
    const std::string path = write("bad.csv", text);
    const std::string message = errorMessage([&] { readCommSamplesCsv(path); });
    expectContains(message, path);
    return message;
  }
};

TEST_F(CommSamplesCsv, RoundTripsEverySampleExactly) {
  const auto samples = samplesOf(kneeTruth(), 0.005, 9);
  const std::string path = (dir.path() / "sweep.csv").string();
  writeCommSamplesCsv(path, samples);
  const auto read = readCommSamplesCsv(path);
  ASSERT_EQ(read.size(), samples.size());
  for (size_t i = 0; i < samples.size(); ++i) {
    EXPECT_EQ(read[i].bytes, samples[i].bytes) << i;
    EXPECT_EQ(read[i].workers, samples[i].workers) << i;
    EXPECT_EQ(read[i].seconds, samples[i].seconds) << i;
  }
}

TEST_F(CommSamplesCsv, SkipsCommentsAndExtraColumnsAndDefaultsToOneWorker) {
  const std::string path = write("osu.csv",
                                 "# OSU all-reduce, 2 nodes\n"
                                 "\n"
                                 "algorithm, seconds, bytes, repeats\n"
                                 "recursive-doubling, 3.2e-5, 8, 100\n"
                                 "# the knee\n"
                                 "ring, 0.000126, 12288, 100\r\n");
  const auto samples = readCommSamplesCsv(path);
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].bytes, 8u);
  EXPECT_EQ(samples[0].seconds, 3.2e-5);
  EXPECT_EQ(samples[0].workers, 1);
  EXPECT_EQ(samples[1].bytes, 12288u);
  EXPECT_EQ(samples[1].seconds, 0.000126);
}

TEST_F(CommSamplesCsv, ReadsTheWorkersColumn) {
  const auto samples = readCommSamplesCsv(write("w.csv", "workers,bytes,seconds\n8,1024,5e-5\n"));
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(samples[0].workers, 8);
}

TEST_F(CommSamplesCsv, RefusesAMissingColumn) {
  const std::string message = refusal("# sweep\nbytes,time\n8,1e-5\n");
  expectContains(message, ":2:");
  expectContains(message, "no 'seconds' column (it has: bytes, time)");
  expectContains(refusal("message_elems,seconds\n10,1e-5\n"), "no 'bytes' column");
}

TEST_F(CommSamplesCsv, RefusesNonNumericFields) {
  const std::string message = refusal("bytes,seconds\n8,1e-5\neight,1e-5\n");
  expectContains(message, ":3:");
  expectContains(message, "field 'bytes' is 'eight', which is not a finite number");
  expectContains(refusal("bytes,seconds\n8,fast\n"), ":2: field 'seconds' is 'fast'");
  expectContains(refusal("bytes,seconds\n8.5,1e-5\n"),
                 ":2: field 'bytes' is 8.5, which is not "
                 "a whole number");
  expectContains(refusal("bytes,seconds,workers\n8,1e-5,two\n"), ":2: field 'workers' is 'two'");
}

TEST_F(CommSamplesCsv, RefusesNegativeAndZeroValues) {
  expectContains(refusal("bytes,seconds\n8,1e-5\n16,-1e-5\n"),
                 ":3: field 'seconds' is -1e-5, which is negative");
  expectContains(refusal("bytes,seconds\n-8,1e-5\n"), ":2: field 'bytes' is -8, which is negative");
  expectContains(refusal("bytes,seconds\n0,1e-5\n"), ":2: field 'bytes' is 0");
  expectContains(refusal("bytes,seconds\n8,0\n"), ":2: field 'seconds' is 0");
  expectContains(refusal("bytes,seconds,workers\n8,1e-5,0\n"), ":2: field 'workers' is 0");
}

TEST_F(CommSamplesCsv, RefusesMalformedFiles) {
  expectContains(refusal("bytes,seconds\n8,1e-5\n16\n"), ":3: 1 fields, but the header has 2");
  expectContains(refusal("bytes,seconds\n"), "no samples below the header");
  expectContains(refusal("# nothing\n"), "no header line");
  expectContains(refusal("bytes,seconds,bytes\n8,1e-5,8\n"),
                 ":1: the header names column "
                 "'bytes' twice");
  const std::string missing = (dir.path() / "missing.csv").string();
  expectContains(errorMessage([&] { readCommSamplesCsv(missing); }), missing + ": cannot open");
}

}  // namespace
}  // namespace imerge::distributed
