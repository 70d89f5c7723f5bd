// Deriving independent seeds from several numbers (seed, epoch, index), so that a random stream
// depends only on what it is for, never on which thread or in what order it is drawn.
#pragma once

#include <cstdint>
#include <initializer_list>

namespace imerge::data {

// SplitMix64's finaliser: a bijection that spreads every input bit over the output, so
// neighbouring indices give unrelated Mersenne Twister seeds.
inline uint64_t splitMix64(uint64_t value) {
  value += 0x9e3779b97f4a7c15ULL;
  value = (value ^ (value >> 30)) * 0xbf58476d1ce4e5b9ULL;
  value = (value ^ (value >> 27)) * 0x94d049bb133111ebULL;
  return value ^ (value >> 31);
}

// Folds the parts in order; (a, b) and (b, a) give different seeds.
inline uint64_t mixSeeds(std::initializer_list<uint64_t> parts) {
  uint64_t state = 0x5851f42d4c957f2dULL;
  for (uint64_t part : parts) state = splitMix64(state ^ splitMix64(part));
  return state;
}
inline uint64_t mixSeeds(uint64_t first, uint64_t second) {
  return mixSeeds({first, second});
}

}  // namespace imerge::data
