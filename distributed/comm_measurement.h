// Measuring all-reduce cost: the short start-up measurement that `mgwfbp` and `imerge` plan
// with when no file from imerge-commbench is given.
#pragma once

#include <vector>

#include "distributed/comm_model.h"
#include "distributed/communicator.h"

namespace imerge::distributed {

// Message sizes of the start-up measurement: 4 B to 16 MiB, dense between 1 and 64 KiB where
// the cost has its knee. Larger messages are extrapolated by the fitted model.
std::vector<size_t> startupMeasurementSizes();

// The median time of `repetitions` float all-reduces of each size among all ranks, after one
// untimed warm-up and a barrier per size, measured on the communication thread. Every rank
// takes part and gets its own figures.
std::vector<CommSample> measureAllreduce(Communicator& communicator,
                                         const std::vector<size_t>& sizes, int repetitions);

}  // namespace imerge::distributed
