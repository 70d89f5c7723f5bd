#include "distributed/planning/trace.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"

namespace imerge::distributed {

Trace::Trace(int rank, int64_t maxSteps)
    : rank_(rank), maxSteps_(maxSteps), origin_(TraceClock::now()) {}

void Trace::setStep(int64_t step) {
  std::lock_guard lock(mutex_);
  step_ = step;
}

void Trace::record(std::string name, std::string category, TraceRow row,
                   TraceClock::time_point start, TraceClock::time_point end, size_t bytes) {
  std::lock_guard lock(mutex_);
  if (step_ >= maxSteps_) return;
  events_.push_back({std::move(name), std::move(category), row, start, end, step_, bytes});
}

std::vector<TraceEvent> Trace::events() const {
  std::lock_guard lock(mutex_);
  return events_;
}

void Trace::write(const std::string& path) const {
  auto microseconds = [&](TraceClock::time_point t) {
    return std::chrono::duration<double, std::micro>(t - origin_).count();
  };
  nlohmann::json events = nlohmann::json::array();
  const char* rowNames[] = {"compute", "communication"};
  for (int row = 0; row < 2; ++row) {
    events.push_back({{"ph", "M"},
                      {"name", "thread_name"},
                      {"pid", rank_},
                      {"tid", row},
                      {"args", {{"name", rowNames[row]}}}});
  }
  events.push_back({{"ph", "M"},
                    {"name", "process_name"},
                    {"pid", rank_},
                    {"args", {{"name", "rank " + std::to_string(rank_)}}}});
  for (const TraceEvent& event : this->events()) {
    nlohmann::json args = {{"step", event.step}};
    if (event.bytes > 0) args["bytes"] = event.bytes;
    events.push_back({{"ph", "X"},
                      {"name", event.name},
                      {"cat", event.category},
                      {"pid", rank_},
                      {"tid", static_cast<int>(event.row)},
                      {"ts", microseconds(event.start)},
                      {"dur", microseconds(event.end) - microseconds(event.start)},
                      {"args", std::move(args)}});
  }
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary);
    IMERGE_CHECK(out.good(), "--trace: cannot write ", temporary, ": ", std::strerror(errno));
    out << nlohmann::json{{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}}.dump()
        << "\n";
    IMERGE_CHECK(out.good(), "--trace: writing ", temporary, " failed: ", std::strerror(errno));
  }
  IMERGE_CHECK(std::rename(temporary.c_str(), path.c_str()) == 0, "--trace: cannot rename ",
               temporary, " to ", path, ": ", std::strerror(errno));
}

std::string traceFileForRank(const std::string& path, int rank) {
  const std::string suffix = ".rank" + std::to_string(rank);
  const size_t slash = path.find_last_of('/');
  const size_t dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) {
    return path + suffix;
  }
  return path.substr(0, dot) + suffix + path.substr(dot);
}

}  // namespace imerge::distributed
