// The host-buffer all-reduce timer (contract in allreduce_timer.h).
#include "distributed/comm/allreduce_timer.h"

#include <chrono>
#include <memory>

#include "core/error.h"

namespace imerge::distributed {

AllreduceTimer hostAllreduceTimer(size_t maxBytes) {
  auto buffer =
      std::make_shared<std::vector<float>>((maxBytes + sizeof(float) - 1) / sizeof(float));
  return [buffer](CollectiveOps& ops, size_t bytes, int count) {
    IMERGE_CHECK(bytes / sizeof(float) <= buffer->size(), "host all-reduce timer: ", bytes,
                 " bytes exceed its buffer of ", buffer->size() * sizeof(float));
    std::vector<double> times;
    for (int rep = 0; rep < count; ++rep) {
      const auto start = CommClock::now();
      ops.allreduceSum(buffer->data(), bytes / sizeof(float));
      times.push_back(std::chrono::duration<double>(CommClock::now() - start).count());
    }
    return times;
  };
}

}  // namespace imerge::distributed
