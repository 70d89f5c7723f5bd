// The measurement grid (contracts in measurement_sizes.h).
#include "distributed/planning/measurement_sizes.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "core/error.h"

namespace imerge::distributed {

std::vector<size_t> startupMeasurementSizes() {
  std::vector<size_t> sizes = {4, 64, 256};
  for (size_t bytes = 1024; bytes <= 64 * 1024; bytes *= 2) sizes.push_back(bytes);
  for (size_t bytes = 256 * 1024; bytes <= 16 * 1024 * 1024; bytes *= 4) sizes.push_back(bytes);
  return sizes;
}

std::vector<size_t> sweepMeasurementSizes(size_t minBytes, size_t maxBytes) {
  IMERGE_CHECK(minBytes >= sizeof(float) && minBytes % sizeof(float) == 0,
               "sweep sizes: the smallest size ", minBytes,
               " bytes must be a positive multiple of 4 (float32 values)");
  IMERGE_CHECK(maxBytes % sizeof(float) == 0, "sweep sizes: the largest size ", maxBytes,
               " bytes must be a multiple of 4 (float32 values)");
  IMERGE_CHECK(maxBytes >= minBytes, "sweep sizes: the largest size ", maxBytes,
               " bytes is below the smallest, ", minBytes);
  constexpr size_t kDenseFrom = 1024;
  constexpr size_t kDenseTo = 64 * 1024;
  std::set<size_t> sizes = {minBytes, maxBytes};
  const auto addRounded = [&](double bytes) {
    const auto rounded = static_cast<size_t>(std::llround(bytes / sizeof(float))) * sizeof(float);
    if (rounded >= minBytes && rounded <= maxBytes) sizes.insert(rounded);
  };
  for (size_t power = 4; power <= maxBytes && power != 0; power *= 2) {
    const bool dense = power >= kDenseFrom && power < kDenseTo;
    const int steps = dense ? 4 : 2;
    for (int step = 0; step < steps; ++step) {
      addRounded(static_cast<double>(power) * std::exp2(static_cast<double>(step) / steps));
    }
    if (power > maxBytes / 2) break;  // the next power would overflow or pass the end
  }
  return {sizes.begin(), sizes.end()};
}

int sweepRepetitions(size_t bytes, int repetitions) {
  IMERGE_CHECK(repetitions > 0, "sweep: repetitions must be positive, got ", repetitions);
  constexpr double kFullRepetitionsUpTo = 1 << 20;
  const double scaled = std::ceil(repetitions * kFullRepetitionsUpTo / static_cast<double>(bytes));
  const int floor = std::min(3, repetitions);
  return static_cast<int>(
      std::clamp(scaled, static_cast<double>(floor), static_cast<double>(repetitions)));
}

}  // namespace imerge::distributed
