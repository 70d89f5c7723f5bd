// The busy compute threads (contract in busy_compute.h).
#include "distributed/runtime/busy_compute.h"

#include <array>

#include "core/error.h"

namespace imerge::distributed {
namespace {

constexpr int kSide = 64;
using Matrix = std::array<float, kSide * kSide>;

// c = a * b, row-major; the inner loop runs over contiguous rows of b and c.
void multiply(const Matrix& a, const Matrix& b, Matrix& c) {
  c.fill(0.0f);
  for (int i = 0; i < kSide; ++i) {
    for (int k = 0; k < kSide; ++k) {
      const float aik = a[i * kSide + k];
      for (int j = 0; j < kSide; ++j) c[i * kSide + j] += aik * b[k * kSide + j];
    }
  }
}

}  // namespace

BusyCompute::BusyCompute(int threads) {
  IMERGE_CHECK(threads >= 1, "BusyCompute: at least 1 thread, not ", threads);
  for (int t = 0; t < threads; ++t) threads_.emplace_back([this] { run(); });
}

BusyCompute::~BusyCompute() {
  stop_.store(true, std::memory_order_relaxed);
  for (std::thread& thread : threads_) thread.join();
}

void BusyCompute::run() {
  Matrix a, b, c;
  for (int i = 0; i < kSide * kSide; ++i) {
    a[i] = static_cast<float>(i % 7) * 0.125f;
    b[i] = static_cast<float>(i % 5) * 0.25f;
  }
  while (!stop_.load(std::memory_order_relaxed)) {
    multiply(a, b, c);
    // Feed the product back so that the compiler cannot drop the work; scaled to stay finite.
    a[c[0] > 0 ? 1 : 0] = c[kSide + 1] * 1e-6f;
    units_.fetch_add(1, std::memory_order_relaxed);
  }
}

}  // namespace imerge::distributed
