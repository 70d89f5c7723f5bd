// imerge-scale's real runs: one (model, workers, strategy) trained by imerge-train, in one process
// for one worker or under mpirun (or a --launcher) for more, and its steady-state figures read
// back from the metrics log and the profile it writes.
#pragma once

#include <cstdint>
#include <string>

#include "apps/scale/scale_table.h"
#include "distributed/planning/compute_profile.h"
#include "distributed/planning/planner.h"

namespace imerge::apps {

struct RealRunSettings {
  std::string imergeTrain;  // the binary
  std::string mpirun = "mpirun";
  // Instead of mpirun: a command that launches the ranks, with {ranks} replaced by their number,
  // e.g. "scripts/slow-network.sh --ranks {ranks} --rate 1gbit --".
  std::string launcher;
  int64_t imageSize = 224;
  int64_t batchSize = 32;
  int64_t maxSteps = 15;
  int64_t warmupSteps = 5;
  distributed::PlannerOptions planner;
  // CSVs of measured samples the runs of several workers plan with (imerge-train --comm-model,
  // --reduce-scatter-model, --all-gather-model), so that a run and its simulation plan from the
  // same measurement; empty: each run measures its own at start-up.
  std::string commModel, reduceScatterModel, allGatherModel;
  std::string scratch;  // where the logs, profiles and outputs go
};

struct MeasuredRun {
  ScaleRow row;  // speedup and efficiency left to the caller (they need the one-worker run)
  distributed::ComputeProfile profile;
};

// The imerge-train binary beside this executable.
std::string imergeTrainBeside(const char* argv0);

// Runs it and reads it back; an imerge::Error names the command and its output file when the run
// fails or its log lacks the figures.
MeasuredRun measureRealRun(const RealRunSettings& settings, const std::string& model, int workers,
                           const std::string& strategy);

}  // namespace imerge::apps
