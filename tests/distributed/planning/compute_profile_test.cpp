// Compute profiles: CSV and JSON round trips, the refusals of bad files (naming the line or the
// field) and the forward split (the FLOP-derived profile: tests/distributed/profiling/).
#include "distributed/planning/compute_profile.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "support/error_text.h"

namespace imerge::distributed {
namespace {

using imerge::testing::errorMessage;
using imerge::testing::expectContains;

std::string writeFile(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

ComputeProfile sample() {
  ComputeProfile profile;
  profile.model = "resnet18";
  profile.batchPerWorker = 32;
  profile.optimizerSeconds = 0.0041234567890123;
  profile.otherSeconds = 1.5e-3;
  profile.tensors = {
      {"fc.bias", 40, 1.25e-5}, {"fc.weight", 20480, 0.1 / 3}, {"conv1.weight", 1728, 0}};
  profile.forwardSecondsPerTensor = {1e-6, 2.0 / 3, 0};
  return profile;
}

void expectSame(const ComputeProfile& a, const ComputeProfile& b) {
  EXPECT_EQ(a.model, b.model);
  EXPECT_EQ(a.batchPerWorker, b.batchPerWorker);
  EXPECT_EQ(a.optimizerSeconds, b.optimizerSeconds);
  EXPECT_EQ(a.otherSeconds, b.otherSeconds);
  ASSERT_EQ(a.tensors.size(), b.tensors.size());
  for (size_t k = 0; k < a.tensors.size(); ++k) {
    EXPECT_EQ(a.tensors[k].name, b.tensors[k].name);
    EXPECT_EQ(a.tensors[k].bytes, b.tensors[k].bytes);
    EXPECT_EQ(a.tensors[k].backwardSeconds, b.tensors[k].backwardSeconds);
    EXPECT_EQ(a.forwardSecondsPerTensor[k], b.forwardSecondsPerTensor[k]);
  }
}

TEST(ComputeProfile, RoundTripsThroughCsvAndJson) {
  for (const char* name : {"profile_round_trip.csv", "profile_round_trip.json"}) {
    const std::string path = ::testing::TempDir() + name;
    writeComputeProfile(path, sample());
    expectSame(readComputeProfile(path), sample());
    std::filesystem::remove(path);
  }
}

TEST(ComputeProfile, Totals) {
  const ComputeProfile profile = sample();
  EXPECT_DOUBLE_EQ(profile.forwardSeconds(), 1e-6 + 2.0 / 3);
  EXPECT_DOUBLE_EQ(profile.backwardSeconds(), 1.25e-5 + 0.1 / 3);
  EXPECT_DOUBLE_EQ(profile.computeSeconds(), profile.forwardSeconds() + profile.backwardSeconds() +
                                                 profile.optimizerSeconds + profile.otherSeconds);
}

TEST(ComputeProfile, ScalingMultipliesEveryTimeAndKeepsTheRest) {
  const ComputeProfile scaled = scaledComputeProfile(sample(), 2.5);
  EXPECT_EQ(scaled.model, "resnet18");
  EXPECT_EQ(scaled.batchPerWorker, 32);
  ASSERT_EQ(scaled.tensors.size(), 3u);
  for (size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(scaled.tensors[k].bytes, sample().tensors[k].bytes);
    EXPECT_DOUBLE_EQ(scaled.tensors[k].backwardSeconds, 2.5 * sample().tensors[k].backwardSeconds);
    EXPECT_DOUBLE_EQ(scaled.forwardSecondsPerTensor[k], 2.5 * sample().forwardSecondsPerTensor[k]);
  }
  EXPECT_DOUBLE_EQ(scaled.optimizerSeconds, 2.5 * sample().optimizerSeconds);
  EXPECT_DOUBLE_EQ(scaled.otherSeconds, 2.5 * sample().otherSeconds);
  EXPECT_DOUBLE_EQ(scaled.computeSeconds(), 2.5 * sample().computeSeconds());
  for (double bad : {0.0, -1.0, std::nan("")}) {
    expectContains(errorMessage([&] { scaledComputeProfile(sample(), bad); }), "factor");
  }
}

TEST(ComputeProfile, ReadsCsvColumnsInAnyOrder) {
  const std::string path =
      writeFile("profile_columns.csv",
                "# a comment\nforward_seconds,extra,name,backward_seconds,bytes\n"
                "0.5,x,b,1.5,8\n0.25,y,a,0.5,4\n");
  const ComputeProfile profile = readComputeProfile(path);
  ASSERT_EQ(profile.tensors.size(), 2u);
  EXPECT_EQ(profile.tensors[1].name, "a");
  EXPECT_EQ(profile.tensors[1].bytes, 4u);
  EXPECT_EQ(profile.forwardSecondsPerTensor[0], 0.5);
}

TEST(ComputeProfile, RefusesBadCsvNamingTheLineAndField) {
  const std::string header = "name,bytes,backward_seconds,forward_seconds\n";
  struct Case {
    std::string text, expected;
  };
  const std::vector<Case> cases = {
      {"name,bytes,forward_seconds\nx,4,1\n", "no 'backward_seconds' column"},
      {header + "a,4,0.1,0.1\nb,4,-0.5,0.1\n",
       ":3: field 'backward_seconds' is -0.5, which is negative"},
      {header + "a,4,fast,0.1\n",
       ":2: field 'backward_seconds' is 'fast', which is not a finite number"},
      {header + "a,4.5,0.1,0.1\n", ":2: field 'bytes' is 4.5, which is not a whole number"},
      {header + "a,4,0.1\n", ":2: 3 fields, but the header has 4 columns"},
      {header + "a,4,0.1,0.1\na,8,0.1,0.1\n", "tensor 1 ('a') appears twice"},
      {header, "no tensors below the header"},
      {"", "no header line"},
  };
  for (const Case& bad : cases) {
    const std::string path = writeFile("profile_bad.csv", bad.text);
    const std::string message = errorMessage([&] { readComputeProfile(path); });
    expectContains(message, bad.expected);
    expectContains(message, "profile_bad.csv");
  }
  expectContains(errorMessage([] { readComputeProfile("/no/such/profile.csv"); }),
                 "/no/such/profile.csv: cannot open");
}

TEST(ComputeProfile, RefusesBadJsonNamingTheField) {
  struct Case {
    std::string text, expected;
  };
  const std::vector<Case> cases = {
      {"{\"tensors\": [{\"name\": \"a\", \"bytes\": 4, \"forward_seconds\": 0}]}",
       "tensors[0]: field 'backward_seconds' is missing"},
      {"{\"tensors\": [{\"name\": \"a\", \"bytes\": 4, \"backward_seconds\": -1, "
       "\"forward_seconds\": 0}]}",
       "tensors[0]: field 'backward_seconds' is -1, which is negative"},
      {"{\"tensors\": [{\"name\": \"a\", \"bytes\": \"4\", \"backward_seconds\": 1, "
       "\"forward_seconds\": 0}]}",
       "tensors[0]: field 'bytes' is \"4\", which is not a number"},
      {"{\"model\": \"m\"}", "field 'tensors'"},
      {"{\"optimizer_seconds\": -2, \"tensors\": []}", "field 'optimizer_seconds' is -2"},
      {"not json", "not valid JSON"},
  };
  for (const Case& bad : cases) {
    const std::string path = writeFile("profile_bad.json", bad.text);
    expectContains(errorMessage([&] { readComputeProfile(path); }), bad.expected);
  }
}

TEST(ComputeProfile, SplitsTheForwardByBackwardTime) {
  const std::vector<TensorInfo> tensors = {{"a", 4, 1.0}, {"b", 4, 3.0}, {"c", 4, 0.0}};
  EXPECT_EQ(splitForwardByBackward(tensors, 8.0), (std::vector<double>{2.0, 6.0, 0.0}));
  const std::vector<TensorInfo> untimed = {{"a", 4, 0.0}, {"b", 4, 0.0}};
  EXPECT_EQ(splitForwardByBackward(untimed, 1.0), (std::vector<double>{0.5, 0.5}));
}

}  // namespace
}  // namespace imerge::distributed
