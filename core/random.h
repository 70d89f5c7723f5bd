// Seeded random numbers. Every random draw in imerge (initialisers, dropout, shuffling) goes
// through a Generator, so a run with the same seed repeats exactly. The state can be saved and
// restored (checkpoints).
#pragma once

#include <cstdint>
#include <random>
#include <string>

#include "core/tensor.h"

namespace imerge {

class Generator {
 public:
  explicit Generator(uint64_t seed = 0) : engine_(seed) {}
  void seed(uint64_t seed) { engine_.seed(seed); }

  float uniform(float low, float high);
  float normal(float mean, float stddev);
  uint64_t nextInt(uint64_t bound);  // uniform in [0, bound)

  // Fills a float32 tensor.
  void fillUniform(Tensor& tensor, float low, float high);
  void fillNormal(Tensor& tensor, float mean, float stddev);

  // The engine's full state as text, and back.
  std::string state() const;
  void setState(const std::string& state);

 private:
  std::mt19937_64 engine_;
};

// The process-wide generator, seeded by manualSeed().
Generator& defaultGenerator();
void manualSeed(uint64_t seed);

}  // namespace imerge
