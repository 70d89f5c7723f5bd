// The benchmarks' timing loop: one warm-up run, then the best of `repeats` timed runs.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>

namespace imerge::bench {

inline double bestSeconds(int repeats, const std::function<void()>& run) {
  double best = 1e30;
  for (int i = 0; i <= repeats; ++i) {  // i == 0 is the warm-up
    const auto start = std::chrono::steady_clock::now();
    run();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (i > 0) best = std::min(best, seconds);
  }
  return best;
}

}  // namespace imerge::bench
