// A stand-in for training's compute beside communication (imerge-commbench --beside-compute):
// threads that multiply small matrices until stopped, counting the multiplications, so that
// both sides of contention can be measured: what an all-reduce costs while the cores compute,
// and how much less compute gets done while an all-reduce is in flight.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace imerge::distributed {

class BusyCompute {
 public:
  // One unit is a 64x64 float32 matrix product (0.5 MFLOP, in cache, as a convolution's blocks
  // are); `threads` at least 1, training's compute threads (OMP_NUM_THREADS).
  explicit BusyCompute(int threads);
  ~BusyCompute();  // stops and joins the threads
  BusyCompute(const BusyCompute&) = delete;
  BusyCompute& operator=(const BusyCompute&) = delete;

  uint64_t unitsDone() const { return units_.load(std::memory_order_relaxed); }
  int threads() const { return static_cast<int>(threads_.size()); }

 private:
  void run();

  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> units_{0};
  std::vector<std::thread> threads_;
};

}  // namespace imerge::distributed
