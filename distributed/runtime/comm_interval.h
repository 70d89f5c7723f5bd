// One collective's time on the communication thread (or a wait for one on the training thread):
// what the Reducer, the priority scheduler and the device events report, and DataParallel turns
// into a step's communication and exposed-wait seconds.
#pragma once

#include <cstddef>

#include "distributed/comm/communicator.h"

namespace imerge::distributed {

struct CommInterval {
  CommClock::time_point start, end;
  size_t bucket = 0;
  size_t bytes = 0;
  CollectiveKind kind = CollectiveKind::AllReduce;
};

}  // namespace imerge::distributed
