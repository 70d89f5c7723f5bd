// Trace: a Chrome-trace JSON timeline of one rank (Horovod's timeline is the model), to open in
// chrome://tracing or Perfetto and see communication overlap backward.
//
// Events are complete events ("ph": "X") on two rows of the rank's process: "compute" (forward,
// each tensor's backward, waiting, the optimizer step) and "communication" (each bucket's
// all-reduce). Times are microseconds since the trace began. Recording is thread-safe, since the
// communication thread reports its own events; it stops after `maxSteps` steps so a long run
// cannot grow the file without bound.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace imerge::distributed {

// The clock of every event: the communicator's (CommClock) is the same steady clock, so the
// runtime records its timestamps here unchanged.
using TraceClock = std::chrono::steady_clock;

enum class TraceRow { Compute = 0, Communication = 1 };

struct TraceEvent {
  std::string name;
  std::string category;  // "forward", "backward", "allreduce", "wait", "optimizer"
  TraceRow row = TraceRow::Compute;
  TraceClock::time_point start, end;
  int64_t step = 0;
  size_t bytes = 0;  // for all-reduces
};

class Trace {
 public:
  Trace(int rank, int64_t maxSteps = 200);

  void setStep(int64_t step);  // events recorded from now on belong to this step
  void record(std::string name, std::string category, TraceRow row, TraceClock::time_point start,
              TraceClock::time_point end, size_t bytes = 0);

  std::vector<TraceEvent> events() const;
  // Writes {"traceEvents": [...], "displayTimeUnit": "ms"} atomically (temporary + rename);
  // an imerge::Error names the path when it cannot.
  void write(const std::string& path) const;

 private:
  int rank_;
  int64_t maxSteps_;
  TraceClock::time_point origin_;
  mutable std::mutex mutex_;
  int64_t step_ = 0;
  std::vector<TraceEvent> events_;
};

// "trace.json" for rank 3 -> "trace.rank3.json": one file per rank, side by side.
std::string traceFileForRank(const std::string& path, int rank);

}  // namespace imerge::distributed
