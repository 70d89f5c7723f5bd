#include "distributed/comm_measurement.h"

#include <algorithm>

#include "core/error.h"

namespace imerge::distributed {

std::vector<size_t> startupMeasurementSizes() {
  std::vector<size_t> sizes = {4, 64, 256};
  for (size_t bytes = 1024; bytes <= 64 * 1024; bytes *= 2) sizes.push_back(bytes);
  for (size_t bytes = 256 * 1024; bytes <= 16 * 1024 * 1024; bytes *= 4) sizes.push_back(bytes);
  return sizes;
}

std::vector<CommSample> measureAllreduce(Communicator& communicator,
                                         const std::vector<size_t>& sizes, int repetitions) {
  IMERGE_CHECK(repetitions > 0, "measureAllreduce: repetitions must be positive, got ",
               repetitions);
  const size_t largest = sizes.empty() ? 0 : *std::max_element(sizes.begin(), sizes.end());
  std::vector<float> buffer((largest + sizeof(float) - 1) / sizeof(float), 0.0f);
  std::vector<CommSample> samples;
  const int workers = communicator.size();
  communicator
      .submit(
          "start-up all-reduce measurement",
          [&](CollectiveOps& ops) {
            for (size_t bytes : sizes) {
              IMERGE_CHECK(bytes >= sizeof(float) && bytes % sizeof(float) == 0,
                           "measureAllreduce: ", bytes,
                           " bytes is not a whole number of float32 values");
              const size_t count = bytes / sizeof(float);
              ops.barrier();
              ops.allreduceSum(buffer.data(), count);  // warm-up: connections, caches
              std::vector<double> times;
              for (int rep = 0; rep < repetitions; ++rep) {
                const auto start = CommClock::now();
                ops.allreduceSum(buffer.data(), count);
                times.push_back(std::chrono::duration<double>(CommClock::now() - start).count());
              }
              std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
              samples.push_back({bytes, workers, times[times.size() / 2]});
            }
          })
      ->wait();
  return samples;
}

}  // namespace imerge::distributed
