// The host-buffer collective timers (contract in allreduce_timer.h).
#include "distributed/comm/allreduce_timer.h"

#include <chrono>
#include <memory>

#include "core/error.h"

namespace imerge::distributed {

AllreduceTimer hostCollectiveTimer(size_t maxBytes, CollectiveKind collective) {
  auto buffer =
      std::make_shared<std::vector<float>>((maxBytes + sizeof(float) - 1) / sizeof(float));
  return [buffer, collective](CollectiveOps& ops, size_t bytes, int count) {
    IMERGE_CHECK(bytes / sizeof(float) <= buffer->size(), "host ", collectiveKindName(collective),
                 " timer: ", bytes, " bytes exceed its buffer of ", buffer->size() * sizeof(float));
    const size_t elements = bytes / sizeof(float);
    std::vector<double> times;
    for (int rep = 0; rep < count; ++rep) {
      const auto start = CommClock::now();
      runCollective(ops, collective, buffer->data(), elements);
      times.push_back(std::chrono::duration<double>(CommClock::now() - start).count());
    }
    return times;
  };
}

}  // namespace imerge::distributed
