// Timing as an observer (PyTorch DDP's Timer and Logger): the Reducer reports what it times to
// a CommTimer, if it was given one, and DataParallel takes each iteration's figures from it. The
// Reducer itself keeps no timing fields, so a Reducer used alone (tests, other loops) pays for
// nothing it does not ask for.
//
// Reports arrive from two threads: the communication thread (each collective, when it ends)
// and the training thread (waits; bookkeeping).
#pragma once

#include <mutex>
#include <vector>

#include "distributed/comm/communicator.h"
#include "distributed/runtime/comm_interval.h"

namespace imerge::distributed {

class CommTimer {
 public:
  // One bucket's collective, start to end on the communication thread, with its bytes.
  void collectiveDone(const CommInterval& interval);
  // The training thread waited for collectives from `start` to `end`. Waits of 2 us or less
  // are dropped: they are the cost of asking, not waiting.
  void waited(CommClock::time_point start, CommClock::time_point end);
  // Seconds the Reducer's hooks and finish() spent on their own work (not waiting).
  void bookkeeping(double seconds);

  // What was reported since the last call of each, which starts afresh.
  std::vector<CommInterval> takeIntervals();
  std::vector<CommInterval> takeWaits();
  double takeBookkeepingSeconds();

 private:
  std::mutex mutex_;
  std::vector<CommInterval> intervals_, waits_;
  double bookkeepingSeconds_ = 0;
};

}  // namespace imerge::distributed
