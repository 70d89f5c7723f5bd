// The host-buffer collective timers (contract in allreduce_timer.h).
#include "distributed/comm/allreduce_timer.h"

#include <chrono>
#include <memory>

#include "core/error.h"

namespace imerge::distributed {

const char* hostCollectiveName(HostCollective collective) {
  static constexpr const char* kNames[] = {"all-reduce", "reduce-scatter", "all-gather"};
  return kNames[static_cast<int>(collective)];
}

AllreduceTimer hostCollectiveTimer(size_t maxBytes, HostCollective collective) {
  auto buffer =
      std::make_shared<std::vector<float>>((maxBytes + sizeof(float) - 1) / sizeof(float));
  return [buffer, collective](CollectiveOps& ops, size_t bytes, int count) {
    IMERGE_CHECK(bytes / sizeof(float) <= buffer->size(), "host ", hostCollectiveName(collective),
                 " timer: ", bytes, " bytes exceed its buffer of ", buffer->size() * sizeof(float));
    const size_t elements = bytes / sizeof(float);
    std::vector<double> times;
    for (int rep = 0; rep < count; ++rep) {
      const auto start = CommClock::now();
      switch (collective) {
        case HostCollective::AllReduce:
          ops.allreduceSum(buffer->data(), elements);
          break;
        case HostCollective::ReduceScatter:
          ops.reduceScatterSum(buffer->data(), elements);
          break;
        case HostCollective::AllGather:
          ops.allgatherBlocks(buffer->data(), elements);
          break;
      }
      times.push_back(std::chrono::duration<double>(CommClock::now() - start).count());
    }
    return times;
  };
}

}  // namespace imerge::distributed
