// The progress bar's arithmetic: the time left from the rate of the steps it saw (an epoch
// resumed mid-way does not count the steps done before it), and durations as people read them.
#include "training/progress_bar.h"

#include <gtest/gtest.h>

#include <cmath>

namespace imerge::training {
namespace {

TEST(ProgressBar, TimeLeftIsAtTheRateOfTheStepsThisBarSaw) {
  // 5 of 20 steps in 10 s: 15 more at 2 s each.
  EXPECT_DOUBLE_EQ(ProgressBar::secondsLeft(10, 5, 0, 20), 30);
  // Resumed after step 10, then 5 steps in 10 s: 5 more at 2 s each (not 10 * 5 / 15).
  EXPECT_DOUBLE_EQ(ProgressBar::secondsLeft(10, 15, 10, 20), 10);
  // No step yet since the start or the resume: unknown, shown as "?".
  EXPECT_TRUE(std::isnan(ProgressBar::secondsLeft(3, 10, 10, 20)));
  EXPECT_TRUE(std::isnan(ProgressBar::secondsLeft(3, 0, 0, 20)));
  EXPECT_EQ(ProgressBar::formatDuration(ProgressBar::secondsLeft(3, 10, 10, 20)), "?");
}

TEST(ProgressBar, DurationsAsHoursMinutesAndSeconds) {
  EXPECT_EQ(ProgressBar::formatDuration(7), "0:07");
  EXPECT_EQ(ProgressBar::formatDuration(242), "4:02");
  EXPECT_EQ(ProgressBar::formatDuration(3909), "1:05:09");
  EXPECT_EQ(ProgressBar::formatDuration(-1), "?");
}

}  // namespace
}  // namespace imerge::training
