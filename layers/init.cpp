#include "layers/init.h"

#include <cmath>

namespace imerge::layers::init {

std::pair<int64_t, int64_t> fanInAndOut(const Tensor& weight) {
  IMERGE_CHECK(weight.ndim() >= 2, "init: weight ", weight.describe(),
               " needs at least 2 dimensions to define fan_in and fan_out");
  int64_t receptiveField = 1;
  for (int i = 2; i < weight.ndim(); ++i) receptiveField *= weight.dim(i);
  return {weight.dim(1) * receptiveField, weight.dim(0) * receptiveField};
}

namespace {
float kaimingStd(const Tensor& weight, float negativeSlope, FanMode mode) {
  auto [fanIn, fanOut] = fanInAndOut(weight);
  const float fan = static_cast<float>(mode == FanMode::FanIn ? fanIn : fanOut);
  const float gain = std::sqrt(2.0f / (1.0f + negativeSlope * negativeSlope));
  return gain / std::sqrt(fan);
}
}  // namespace

void kaimingUniform(Tensor& weight, Generator& generator, float negativeSlope, FanMode mode) {
  const float bound = std::sqrt(3.0f) * kaimingStd(weight, negativeSlope, mode);
  generator.fillUniform(weight, -bound, bound);
}

void kaimingNormal(Tensor& weight, Generator& generator, float negativeSlope, FanMode mode) {
  generator.fillNormal(weight, 0.0f, kaimingStd(weight, negativeSlope, mode));
}

void xavierUniform(Tensor& weight, Generator& generator, float gain) {
  auto [fanIn, fanOut] = fanInAndOut(weight);
  const float bound = gain * std::sqrt(6.0f / static_cast<float>(fanIn + fanOut));
  generator.fillUniform(weight, -bound, bound);
}

void xavierNormal(Tensor& weight, Generator& generator, float gain) {
  auto [fanIn, fanOut] = fanInAndOut(weight);
  generator.fillNormal(weight, 0.0f, gain * std::sqrt(2.0f / static_cast<float>(fanIn + fanOut)));
}

void defaultLayerInit(Tensor& weight, Tensor* bias, Generator& generator) {
  kaimingUniform(weight, generator, std::sqrt(5.0f));
  if (bias) {
    const float bound = 1.0f / std::sqrt(static_cast<float>(fanInAndOut(weight).first));
    generator.fillUniform(*bias, -bound, bound);
  }
}

}  // namespace imerge::layers::init
