// Measuring all-reduce cost (contracts in comm_measurement.h).
#include "distributed/runtime/comm_measurement.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <set>
#include <string>

#include "core/error.h"

namespace imerge::distributed {

namespace {

// Both measurements: per size a barrier, a warm-up, the timed repetitions, each counted at the
// slowest rank.
std::vector<AllreduceMeasurement> measureEachSize(
    Communicator& communicator, const std::string& label, const std::vector<size_t>& sizes,
    const std::function<int(size_t)>& repetitionsFor, const AllreduceTimer& timer,
    const std::function<void(const AllreduceMeasurement&, size_t index)>& onMeasured) {
  for (size_t bytes : sizes) {
    IMERGE_CHECK(bytes >= sizeof(float) && bytes % sizeof(float) == 0, label, ": ", bytes,
                 " bytes is not a whole number of float32 values");
  }
  std::vector<AllreduceMeasurement> measurements;
  const int workers = communicator.size();
  communicator
      .submit(
          label,
          [&](CollectiveOps& ops) {
            for (size_t index = 0; index < sizes.size(); ++index) {
              const size_t bytes = sizes[index];
              const int count = repetitionsFor(bytes);
              ops.barrier();
              timer(ops, bytes, 1);  // warm-up: connections, caches, first touch
              const std::vector<double> local = timer(ops, bytes, count);
              IMERGE_CHECK(local.size() == static_cast<size_t>(count), label,
                           ": the timer returned ", local.size(), " times for ", count,
                           " repetitions");
              // The slowest rank's time of each repetition, in whole nanoseconds.
              std::vector<int64_t> nanoseconds;
              for (double seconds : local) nanoseconds.push_back(std::llround(seconds * 1e9));
              ops.allreduceMax(nanoseconds.data(), nanoseconds.size());
              std::vector<double> times;
              for (int64_t ns : nanoseconds) times.push_back(static_cast<double>(ns) * 1e-9);
              std::sort(times.begin(), times.end());
              const size_t middle = times.size() / 2;
              const double median =
                  times.size() % 2 ? times[middle] : (times[middle - 1] + times[middle]) / 2;
              measurements.push_back({bytes, workers, count, median, times.front(), times.back()});
              if (onMeasured) onMeasured(measurements.back(), index);
            }
          })
      ->wait();
  return measurements;
}

}  // namespace

std::vector<CommSample> measureAllreduce(Communicator& communicator,
                                         const std::vector<size_t>& sizes, int repetitions) {
  const size_t largest = sizes.empty() ? 0 : *std::max_element(sizes.begin(), sizes.end());
  return measureAllreduce(communicator, sizes, repetitions, hostAllreduceTimer(largest));
}

std::vector<CommSample> measureAllreduce(Communicator& communicator,
                                         const std::vector<size_t>& sizes, int repetitions,
                                         const AllreduceTimer& timer) {
  IMERGE_CHECK(repetitions > 0, "measureAllreduce: repetitions must be positive, got ",
               repetitions);
  std::vector<CommSample> samples;
  for (const AllreduceMeasurement& measurement :
       measureEachSize(communicator, "start-up all-reduce measurement", sizes,
                       [repetitions](size_t) { return repetitions; }, timer, {})) {
    samples.push_back(measurement.sample());
  }
  return samples;
}

std::vector<AllreduceMeasurement> measureAllreduceSweep(
    Communicator& communicator, const std::vector<size_t>& sizes, int repetitions,
    const AllreduceTimer& timer,
    const std::function<void(const AllreduceMeasurement&, size_t index)>& onMeasured) {
  sweepRepetitions(sizeof(float), repetitions);  // refuses a count below 1 before any collective
  return measureEachSize(
      communicator, "all-reduce sweep", sizes,
      [repetitions](size_t bytes) { return sweepRepetitions(bytes, repetitions); }, timer,
      onMeasured);
}

}  // namespace imerge::distributed
