// Generator: the same seed repeats exactly, the state saves and restores, and the draws have
// the moments they should.
#include "core/random.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace imerge {
namespace {

std::vector<float> draws(Generator& generator, int count) {
  std::vector<float> values;
  for (int i = 0; i < count; ++i) values.push_back(generator.uniform(0.0f, 1.0f));
  return values;
}

TEST(Generator, SameSeedSameSequence) {
  Generator a(17);
  Generator b(17);
  Generator c(18);
  const auto fromA = draws(a, 100);
  EXPECT_EQ(fromA, draws(b, 100));
  EXPECT_NE(fromA, draws(c, 100));
  a.seed(17);
  EXPECT_EQ(draws(a, 100), fromA);
}

TEST(Generator, StateSavesAndRestores) {
  Generator generator(3);
  draws(generator, 10);
  const std::string saved = generator.state();
  const auto next = draws(generator, 50);
  const float normalNext = generator.normal(0.0f, 1.0f);
  generator.setState(saved);
  EXPECT_EQ(draws(generator, 50), next);
  EXPECT_EQ(generator.normal(0.0f, 1.0f), normalNext);

  Generator other(999);
  other.setState(saved);
  EXPECT_EQ(draws(other, 50), next);
}

TEST(Generator, MalformedStateIsRejected) {
  Generator generator(1);
  EXPECT_THROW(generator.setState("not a state"), Error);
}

TEST(Generator, UniformStaysInRangeWithTheRightMoments) {
  Generator generator(5);
  const int count = 200000;
  double sum = 0;
  double sumSquares = 0;
  for (int i = 0; i < count; ++i) {
    const float value = generator.uniform(-2.0f, 4.0f);
    ASSERT_GE(value, -2.0f);
    ASSERT_LT(value, 4.0f);
    sum += value;
    sumSquares += static_cast<double>(value) * value;
  }
  const double mean = sum / count;
  const double variance = sumSquares / count - mean * mean;
  EXPECT_NEAR(mean, 1.0, 0.02);              // (low + high) / 2; standard error 0.004
  EXPECT_NEAR(variance, 36.0 / 12.0, 0.03);  // (high - low)^2 / 12
}

TEST(Generator, NormalHasTheRightMoments) {
  Generator generator(6);
  const int count = 200000;
  double sum = 0;
  double sumSquares = 0;
  double sumFourth = 0;
  for (int i = 0; i < count; ++i) {
    const double value = generator.normal(3.0f, 2.0f);
    ASSERT_TRUE(std::isfinite(value));
    sum += value;
    sumSquares += value * value;
    const double z = (value - 3.0) / 2.0;
    sumFourth += z * z * z * z;
  }
  const double mean = sum / count;
  const double variance = sumSquares / count - mean * mean;
  EXPECT_NEAR(mean, 3.0, 0.02);  // standard error 0.0045
  EXPECT_NEAR(variance, 4.0, 0.06);
  EXPECT_NEAR(sumFourth / count, 3.0, 0.1);  // a Gaussian's kurtosis
}

TEST(Generator, NextIntCoversItsRangeEvenly) {
  Generator generator(7);
  std::vector<int> counts(10, 0);
  for (int i = 0; i < 100000; ++i) {
    const uint64_t value = generator.nextInt(10);
    ASSERT_LT(value, 10u);
    ++counts[value];
  }
  for (int count : counts) EXPECT_NEAR(count, 10000, 500);
  EXPECT_EQ(generator.nextInt(1), 0u);
  EXPECT_THROW(generator.nextInt(0), Error);
}

TEST(Generator, FillsTensorsReproducibly) {
  Generator a(8);
  Generator b(8);
  Tensor first = Tensor::empty({4, 5});
  Tensor second = Tensor::empty({4, 5});
  a.fillUniform(first, -1.0f, 1.0f);
  b.fillUniform(second, -1.0f, 1.0f);
  EXPECT_EQ(first.toVector(), second.toVector());
  a.fillNormal(first, 0.0f, 1.0f);
  b.fillNormal(second, 0.0f, 1.0f);
  EXPECT_EQ(first.toVector(), second.toVector());
  Tensor labels = Tensor::empty({3}, DType::Int64);
  EXPECT_THROW(a.fillUniform(labels, 0.0f, 1.0f), Error);
}

TEST(Generator, ManualSeedResetsTheDefaultGenerator) {
  manualSeed(42);
  const auto first = draws(defaultGenerator(), 20);
  manualSeed(42);
  EXPECT_EQ(draws(defaultGenerator(), 20), first);
}

}  // namespace
}  // namespace imerge
