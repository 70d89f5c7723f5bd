// The random numbers of the CUDA dropout mask (core/cuda/dropout.cu): a counter-based generator,
// so element i's draw depends only on (seed, i), never on the launch configuration or the order
// threads run in. Compiles for the device (nvcc) and the host (plain g++), so that
// tests/core/cuda_kernel_math_test.cpp checks it without a GPU.
//
// The generator is Philox4x32-10 (Salmon, Moraes, Dror, Shaw: "Parallel random numbers: as easy
// as 1, 2, 3", SC 2011), the one PyTorch's CUDA dropout uses, written from the paper's
// description: a 128-bit counter and a 64-bit key; each of the 10 rounds multiplies counter words
// 0 and 2 by two constants into 64-bit products and mixes their halves with words 1 and 3 and
// the key; the key is bumped by two Weyl constants between rounds. The test checks it against
// the Random123 distribution's published known-answer vectors.
//
// Layout: the 64-bit seed is the key; element i uses word i % 4 of the block for counter
// {i / 4 (low 32 bits), i / 4 (high 32 bits), 0, 0}. Its uniform draw is the word's top 24 bits
// times 2^-24 (every float in [0, 1) with spacing 2^-24, as Generator::uniform), and the mask
// element is 0 if that draw is below p, else 1 / (1 - p).
#pragma once

#include <cstdint>

#include "core/cuda/host_device.h"

namespace imerge::cuda::dropout {

struct PhiloxBlock {
  uint32_t word[4];
};

// The round multipliers and the key's Weyl increments (golden ratio, sqrt(3) - 1).
constexpr uint32_t kPhiloxMultiplier0 = 0xD2511F53u;
constexpr uint32_t kPhiloxMultiplier1 = 0xCD9E8D57u;
constexpr uint32_t kPhiloxWeyl0 = 0x9E3779B9u;
constexpr uint32_t kPhiloxWeyl1 = 0xBB67AE85u;

IMERGE_HOST_DEVICE inline PhiloxBlock philoxRound(const PhiloxBlock& counter, uint32_t key0,
                                                  uint32_t key1) {
  const uint64_t product0 = static_cast<uint64_t>(kPhiloxMultiplier0) * counter.word[0];
  const uint64_t product1 = static_cast<uint64_t>(kPhiloxMultiplier1) * counter.word[2];
  const uint32_t high0 = static_cast<uint32_t>(product0 >> 32);
  const uint32_t low0 = static_cast<uint32_t>(product0);
  const uint32_t high1 = static_cast<uint32_t>(product1 >> 32);
  const uint32_t low1 = static_cast<uint32_t>(product1);
  return {{high1 ^ counter.word[1] ^ key0, low1, high0 ^ counter.word[3] ^ key1, low0}};
}

// Philox4x32 with 10 rounds.
IMERGE_HOST_DEVICE inline PhiloxBlock philox4x32_10(PhiloxBlock counter, uint32_t key0,
                                                    uint32_t key1) {
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      key0 += kPhiloxWeyl0;
      key1 += kPhiloxWeyl1;
    }
    counter = philoxRound(counter, key0, key1);
  }
  return counter;
}

// The four draws of elements 4 * group .. 4 * group + 3.
IMERGE_HOST_DEVICE inline PhiloxBlock dropoutBits(uint64_t seed, uint64_t group) {
  const PhiloxBlock counter = {
      {static_cast<uint32_t>(group), static_cast<uint32_t>(group >> 32), 0u, 0u}};
  return philox4x32_10(counter, static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
}

// Top 24 bits -> [0, 1), exactly representable in float.
IMERGE_HOST_DEVICE inline float uniformFromBits(uint32_t bits) {
  return static_cast<float>(bits >> 8) * (1.0f / 16777216.0f);
}

// Element i's uniform draw (the kernel computes a whole group at once; this is the same value).
IMERGE_HOST_DEVICE inline float dropoutUniform(uint64_t seed, uint64_t index) {
  return uniformFromBits(dropoutBits(seed, index / 4).word[index % 4]);
}

// 1 / (1 - p), or 0 for p = 1 (everything dropped, no division by zero).
IMERGE_HOST_DEVICE inline float survivorScale(float p) {
  return p < 1.0f ? 1.0f / (1.0f - p) : 0.0f;
}

IMERGE_HOST_DEVICE inline float maskValue(float uniform, float p, float scale) {
  return uniform < p ? 0.0f : scale;
}

}  // namespace imerge::cuda::dropout
