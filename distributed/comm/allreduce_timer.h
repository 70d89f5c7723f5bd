// Timing one backend's all-reduce (or, on the host, its halves): what a measurement of the
// communication cost (runtime/comm_measurement.h) runs at each size, brought by the backend whose
// buffers it uses.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "distributed/comm/communicator.h"

namespace imerge::distributed {

// How a sweep runs one size: `count` float all-reduces of `bytes / 4` elements (buffer large
// enough), returning each repetition's time on this rank. measureAllreduceSweep calls it on the
// communication thread with every rank at the same size; a backend brings its own (the host
// buffer version is hostAllreduceTimer, NCCL's lives in imerge-commbench).
using AllreduceTimer =
    std::function<std::vector<double>(CollectiveOps& ops, size_t bytes, int count)>;
// Times host-buffer collectives through `ops` (one buffer of maxBytes, reused): the all-reduce,
// or one half of it (CollectiveOps::reduceScatterSum or allgatherBlocks of the whole `bytes`).
AllreduceTimer hostCollectiveTimer(size_t maxBytes, CollectiveKind collective);
inline AllreduceTimer hostAllreduceTimer(size_t maxBytes) {
  return hostCollectiveTimer(maxBytes, CollectiveKind::AllReduce);
}

}  // namespace imerge::distributed
