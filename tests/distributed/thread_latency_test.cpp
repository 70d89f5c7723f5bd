// The communication thread's pacing (distributed/thread_latency.h): the busy-core check that
// decides between yielding and sleeping, and the spin at the start of a request.
#include "distributed/thread_latency.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace imerge::distributed {
namespace {

// More spinning threads than cores: every core is busy, whatever else the machine runs.
TEST(ThreadLatency, EveryCoreIsBusyOnceMoreThreadsSpinThanThereAreCores) {
  std::atomic<bool> stop{false};
  std::vector<std::thread> spinners;
  for (unsigned i = 0; i < std::thread::hardware_concurrency() + 1; ++i) {
    spinners.emplace_back([&] {
      while (!stop.load(std::memory_order_relaxed)) {
      }
    });
  }
  bool busy = false;
  const auto giveUpAt = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!busy && std::chrono::steady_clock::now() < giveUpAt) {
    busy = everyCoreIsBusy();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  stop = true;
  for (std::thread& spinner : spinners) spinner.join();
  EXPECT_TRUE(busy) << "/proc/loadavg never counted more running threads than cores";
}

// A request younger than kSpinBeforePausing is tested again at once: no yield, no sleep.
TEST(ThreadLatency, PauseReturnsAtOnceWhileARequestIsYoung) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 1000; ++i) pauseBetweenTests(std::chrono::microseconds(0));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(50));
}

}  // namespace
}  // namespace imerge::distributed
