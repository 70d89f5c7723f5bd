#include "models/torchvision_init.h"

#include <cmath>
#include <limits>

#include "layers/conv2d.h"
#include "layers/init.h"
#include "layers/linear.h"

namespace imerge::models::internal {

void forEachModule(layers::Module& root, const std::function<void(layers::Module&)>& visit) {
  visit(root);
  for (const auto& [name, child] : root.children()) forEachModule(*child, visit);
}

void initConvsKaimingFanOut(layers::Module& root, Generator& generator) {
  forEachModule(root, [&](layers::Module& module) {
    auto* conv = dynamic_cast<layers::Conv2d*>(&module);
    if (conv == nullptr) return;
    // kaiming_normal(fan_out, relu): std = sqrt(2 / fan_out), as layers::init::kaimingNormal.
    Tensor& weight = conv->weight().tensor();
    const int64_t fanOut = layers::init::fanInAndOut(weight).second;
    fillNormalFast(weight, 0.0f, std::sqrt(2.0f / static_cast<float>(fanOut)), generator);
    if (conv->bias().defined()) conv->bias().tensor().zero();
  });
}

void initLinearsNormal(layers::Module& root, float stddev, Generator& generator) {
  forEachModule(root, [&](layers::Module& module) {
    auto* linear = dynamic_cast<layers::Linear*>(&module);
    if (linear == nullptr) return;
    fillNormalFast(linear->weight().tensor(), 0.0f, stddev, generator);
    if (linear->bias().defined()) linear->bias().tensor().zero();
  });
}

namespace {

// xoshiro256** (Blackman and Vigna), seeded through splitmix64: ~1 ns a draw.
class FastStream {
 public:
  explicit FastStream(uint64_t seed) {
    for (auto& word : state_) {
      seed += 0x9e3779b97f4a7c15ull;
      uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
      word = z ^ (z >> 31);
    }
  }
  // Uniform in (-1, 1) from 24 random bits.
  float symmetric() { return static_cast<float>(next() >> 40) * (2.0f / 16777216.0f) - 1.0f; }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t next() {
    const uint64_t result = rotl(state_[1] * 5, 7) * 9;
    const uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }
  uint64_t state_[4];
};

}  // namespace

void fillNormalFast(Tensor& tensor, float mean, float stddev, Generator& generator) {
  // One draw from `generator` seeds a local stream, so the result still repeats with the
  // generator's seed and the generator advances by the same amount for any tensor size.
  FastStream stream(generator.nextInt(std::numeric_limits<uint64_t>::max()));
  float* values = tensor.data<float>();
  const int64_t count = tensor.numel();
  for (int64_t i = 0; i < count; i += 2) {
    // Marsaglia's polar method: a point uniform in the unit disc gives two independent
    // normals with one logarithm and no trigonometry.
    float u = 0.0f, v = 0.0f, radiusSquared = 0.0f;
    do {
      u = stream.symmetric();
      v = stream.symmetric();
      radiusSquared = u * u + v * v;
    } while (radiusSquared >= 1.0f || radiusSquared == 0.0f);
    const float factor = stddev * std::sqrt(-2.0f * std::log(radiusSquared) / radiusSquared);
    values[i] = mean + u * factor;
    if (i + 1 < count) values[i + 1] = mean + v * factor;
  }
}

}  // namespace imerge::models::internal
