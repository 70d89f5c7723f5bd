// Contention read from imerge-commbench --beside-compute output: the cost beside compute is
// the fit of its samples, the compute slowdown the median over sizes at the nearest count, 1
// for a profile that already holds it; files measured without --beside-compute are refused.
#include "distributed/planning/measured_contention.h"

#include <gtest/gtest.h>

#include <fstream>

#include "support/error_text.h"
#include "support/temp_dir.h"

namespace imerge::distributed {
namespace {

using imerge::testing::errorMessage;
using imerge::testing::expectContains;
using imerge::testing::TempDir;

class MeasuredContentionTest : public ::testing::Test {
 protected:
  TempDir dir{"measured-contention"};

  std::string write(const std::string& text) const {
    const std::string path = (dir.path() / "contention.csv").string();
    std::ofstream(path) << text;
    return path;
  }
};

// 1 ms + 1 us per KiB at 2 workers, twice that at 4; slowdowns 1.2, 1.5, 1.9 (median 1.5)
// at 2 workers and 2.0 at 4 workers; one sample at 1 worker, which says nothing.
constexpr const char* kMeasured =
    "bytes,workers,seconds,compute_slowdown\n"
    "1024,1,0.000001,1.0\n"
    "1024,2,0.001001,1.9\n"
    "65536,2,0.001064,1.2\n"
    "1048576,2,0.002024,1.5\n"
    "1024,4,0.002002,2.0\n"
    "65536,4,0.002128,2.0\n"
    "1048576,4,0.004048,2.0\n";

TEST_F(MeasuredContentionTest, SlowdownIsTheMedianAtTheNearestCount) {
  const MeasuredContention contention = MeasuredContention::load(write(kMeasured), "--contention");
  EXPECT_DOUBLE_EQ(contention.computeSlowdownAt(2), 1.5);
  EXPECT_DOUBLE_EQ(contention.computeSlowdownAt(4), 2.0);
  EXPECT_DOUBLE_EQ(contention.computeSlowdownAt(16), 2.0);  // from 4 workers, as the cost
  const Contention fresh = contention.at(2, false);
  EXPECT_DOUBLE_EQ(fresh.computeSlowdown, 1.5);
  ASSERT_NE(fresh.besideCompute, nullptr);
  EXPECT_NEAR(fresh.besideCompute->seconds(65536, 2), 0.001064, 1e-9);
  EXPECT_NEAR(fresh.besideCompute->seconds(1048576, 4), 0.004048, 1e-9);
  EXPECT_DOUBLE_EQ(contention.at(2, true).computeSlowdown, 1.0);  // the profile holds it
}

TEST_F(MeasuredContentionTest, RefusesAFileMeasuredWithoutCompute) {
  const std::string path = write("bytes,workers,seconds\n1024,2,0.001\n65536,2,0.002\n");
  const std::string message = errorMessage([&] { MeasuredContention::load(path, "--contention"); });
  expectContains(message, "--contention " + path);
  expectContains(message, "no 'compute_slowdown' column");
  expectContains(message, "--beside-compute");
}

TEST_F(MeasuredContentionTest, RefusesComputeFasterBesideCommunication) {
  const std::string path = write(
      "bytes,workers,seconds,compute_slowdown\n1024,2,0.001,0.7\n65536,2,0.0011,0.5\n"
      "1048576,2,0.002,1.3\n");
  const std::string message = errorMessage([&] { MeasuredContention::load(path, "--contention"); });
  expectContains(message, "--contention " + path);
  expectContains(message, "median compute_slowdown at 2 workers is 0.7");
}

TEST_F(MeasuredContentionTest, AcceptsOneNoisyRowBelowOne) {
  // One row at 0.5 (a busy machine's short window); the median, 1.2, is what is used.
  const std::string path = write(
      "bytes,workers,seconds,compute_slowdown\n1024,2,0.001,1.2\n65536,2,0.0011,0.5\n"
      "1048576,2,0.002,1.3\n");
  EXPECT_DOUBLE_EQ(MeasuredContention::load(path, "--contention").computeSlowdownAt(2), 1.2);
}

}  // namespace
}  // namespace imerge::distributed
