// The communication timer (contract in comm_timer.h).
#include "distributed/runtime/comm_timer.h"

#include <chrono>
#include <utility>

namespace imerge::distributed {

void CommTimer::collectiveDone(const CommInterval& interval) {
  std::lock_guard lock(mutex_);
  intervals_.push_back(interval);
}

void CommTimer::waited(CommClock::time_point start, CommClock::time_point end) {
  if (end - start <= std::chrono::microseconds(2)) return;
  std::lock_guard lock(mutex_);
  waits_.push_back({start, end, 0, 0});
}

void CommTimer::bookkeeping(double seconds) {
  std::lock_guard lock(mutex_);
  bookkeepingSeconds_ += seconds;
}

std::vector<CommInterval> CommTimer::takeIntervals() {
  std::lock_guard lock(mutex_);
  return std::exchange(intervals_, {});
}

std::vector<CommInterval> CommTimer::takeWaits() {
  std::lock_guard lock(mutex_);
  return std::exchange(waits_, {});
}

double CommTimer::takeBookkeepingSeconds() {
  std::lock_guard lock(mutex_);
  return std::exchange(bookkeepingSeconds_, 0.0);
}

}  // namespace imerge::distributed
