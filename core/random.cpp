#include "core/random.h"

#include <cmath>
#include <sstream>

namespace imerge {

float Generator::uniform(float low, float high) {
  // 24 random bits give every float in [0, 1) that has a fixed spacing of 2^-24.
  const float unit = static_cast<float>(engine_() >> 40) * (1.0f / 16777216.0f);
  return low + (high - low) * unit;
}

float Generator::normal(float mean, float stddev) {
  // Box-Muller; 1 - u keeps the logarithm's argument away from zero.
  const double u1 = 1.0 - static_cast<double>(engine_() >> 11) * (1.0 / 9007199254740992.0);
  const double u2 = static_cast<double>(engine_() >> 11) * (1.0 / 9007199254740992.0);
  const double radius = std::sqrt(-2.0 * std::log(u1));
  return mean + stddev * static_cast<float>(radius * std::cos(2.0 * M_PI * u2));
}

uint64_t Generator::nextInt(uint64_t bound) {
  IMERGE_CHECK(bound > 0, "Generator::nextInt: bound must be positive");
  return std::uniform_int_distribution<uint64_t>(0, bound - 1)(engine_);
}

void Generator::fillUniform(Tensor& tensor, float low, float high) {
  float* values = tensor.data<float>();
  for (int64_t i = 0; i < tensor.numel(); ++i) values[i] = uniform(low, high);
}

void Generator::fillNormal(Tensor& tensor, float mean, float stddev) {
  float* values = tensor.data<float>();
  for (int64_t i = 0; i < tensor.numel(); ++i) values[i] = normal(mean, stddev);
}

std::string Generator::state() const {
  std::ostringstream out;
  out << engine_;
  return out.str();
}

void Generator::setState(const std::string& state) {
  std::istringstream in(state);
  std::mt19937_64 restored;
  in >> restored;
  IMERGE_CHECK(!in.fail(), "Generator::setState: the saved random state is malformed");
  engine_ = restored;
}

Generator& defaultGenerator() {
  static Generator generator(0);
  return generator;
}

void manualSeed(uint64_t seed) {
  defaultGenerator().seed(seed);
}

}  // namespace imerge
