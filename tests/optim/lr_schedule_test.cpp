// Learning-rate schedules against hand-computed values.
#include "optim/lr_schedule.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"
#include "support/error_text.h"

namespace imerge::optim {
namespace {

TEST(LrSchedule, StepDecaysEveryStepEpochs) {
  LrSchedule schedule(
      {.kind = LrScheduleKind::Step, .baseLr = 0.1f, .stepEpochs = 30, .gamma = 0.1f});
  EXPECT_FLOAT_EQ(schedule.learningRate(0.0), 0.1f);
  EXPECT_FLOAT_EQ(schedule.learningRate(29.9), 0.1f);
  EXPECT_FLOAT_EQ(schedule.learningRate(30.0), 0.01f);
  EXPECT_NEAR(schedule.learningRate(65.0), 0.001f, 1e-9);
}

TEST(LrSchedule, WarmupRisesLinearlyWithinEpochs) {
  LrSchedule schedule({.kind = LrScheduleKind::Step,
                       .baseLr = 0.4f,
                       .warmupEpochs = 2,
                       .stepEpochs = 10,
                       .gamma = 0.5f});
  EXPECT_FLOAT_EQ(schedule.learningRate(0, 0, 100), 0.0f);
  EXPECT_FLOAT_EQ(schedule.learningRate(0, 50, 100), 0.1f);  // a quarter of the way
  EXPECT_FLOAT_EQ(schedule.learningRate(1, 50, 100), 0.3f);  // three quarters
  EXPECT_FLOAT_EQ(schedule.learningRate(2, 0, 100), 0.4f);
  EXPECT_FLOAT_EQ(schedule.learningRate(10, 0, 100), 0.2f);
}

TEST(LrSchedule, CosineFollowsHalfPeriodAfterWarmup) {
  LrSchedule schedule({.kind = LrScheduleKind::Cosine,
                       .baseLr = 1.0f,
                       .warmupEpochs = 1,
                       .totalEpochs = 11,
                       .minLr = 0.0f});
  EXPECT_FLOAT_EQ(schedule.learningRate(1.0), 1.0f);
  EXPECT_NEAR(schedule.learningRate(6.0), 0.5f, 1e-6);  // half way: cos(pi/2)
  EXPECT_NEAR(schedule.learningRate(3.5), (1 + std::cos(M_PI * 0.25)) / 2, 1e-6);
  EXPECT_NEAR(schedule.learningRate(11.0), 0.0f, 1e-7);
  EXPECT_NEAR(schedule.learningRate(20.0), 0.0f, 1e-7);  // stays at the floor
}

TEST(LrSchedule, RejectsBadSettings) {
  EXPECT_THROW(LrSchedule::parseKind("linear"), Error);
  testing::expectContains(testing::errorMessage([] { LrSchedule::parseKind("linear"); }),
                          "'linear'");
  EXPECT_THROW(LrSchedule({.kind = LrScheduleKind::Cosine, .warmupEpochs = 5, .totalEpochs = 5}),
               Error);
}

}  // namespace
}  // namespace imerge::optim
