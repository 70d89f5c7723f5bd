// imerge-scale's real runs (contract in measured_run.h).
#include "apps/scale/measured_run.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/error.h"

namespace imerge::apps {
namespace {

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values.empty() ? 0.0 : values[values.size() / 2];
}

std::string shellQuoted(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

}  // namespace

std::string imergeTrainBeside(const char* argv0) {
  std::error_code ignored;
  const std::filesystem::path self = std::filesystem::canonical("/proc/self/exe", ignored);
  const std::filesystem::path beside =
      (self.empty() ? std::filesystem::path(argv0) : self).parent_path() / "imerge-train";
  return beside.string();
}

// One worker runs through --profile's one-process DataParallel, so that the same breakdown is
// logged as by `mpirun -np workers imerge-train --dist`.
MeasuredRun measureRealRun(const RealRunSettings& options, const std::string& model, int workers,
                           const std::string& strategy) {
  const std::string& scratch = options.scratch;
  const std::string stem = detail::concat(scratch, "/", model, "_", strategy, "_", workers, "w");
  const std::string log = stem + ".metrics.json";
  const std::string profilePath = stem + ".profile.json";
  const std::string output = stem + ".out";
  std::string command;
  if (workers > 1 && !options.launcher.empty()) {
    command = options.launcher;
    for (size_t at; (at = command.find("{ranks}")) != std::string::npos;) {
      command.replace(at, 7, std::to_string(workers));
    }
    command += " ";
  } else if (workers > 1) {
    command = shellQuoted(options.mpirun) +
              " --allow-run-as-root --oversubscribe --bind-to none -np " + std::to_string(workers) +
              " ";
  }
  command += shellQuoted(options.imergeTrain) + " --model " + shellQuoted(model) +
             " --dataset synthetic --image-size " + std::to_string(options.imageSize) +
             " --batch-size " + std::to_string(options.batchSize) + " --epochs 1 --max-steps " +
             std::to_string(options.maxSteps) + " --warmup-steps " +
             std::to_string(options.warmupSteps) + " --workers 1 --log-json " + shellQuoted(log) +
             " --profile " + shellQuoted(profilePath) + " --fusion-bytes " +
             std::to_string(options.planner.fusionBytes) + " --slice-elems " +
             std::to_string(options.planner.sliceElements);
  if (workers > 1) {
    command += " --dist " + strategy;
    for (const auto& [flag, path] : {std::pair{"--comm-model", &options.commModel},
                                     {"--reduce-scatter-model", &options.reduceScatterModel},
                                     {"--all-gather-model", &options.allGatherModel}}) {
      if (!path->empty()) command += std::string(" ") + flag + " " + shellQuoted(*path);
    }
  }
  command += " > " + shellQuoted(output) + " 2>&1";
  std::printf("measuring %s on %d worker%s%s%s (%lld steps) ...\n", model.c_str(), workers,
              workers == 1 ? "" : "s", workers == 1 ? "" : " with ",
              workers == 1 ? "" : strategy.c_str(), static_cast<long long>(options.maxSteps));
  std::fflush(stdout);
  const int status = std::system(command.c_str());
  IMERGE_CHECK(status == 0, "the measured run of ", model, " on ", workers, " workers with ",
               strategy, " failed (exit status ", status, "); its output is in ", output,
               "\n  command: ", command);

  std::ifstream file(log);
  IMERGE_CHECK(file.is_open(), "the measured run wrote no metrics log ", log);
  const nlohmann::json document = nlohmann::json::parse(file);
  const nlohmann::json& epoch = document.at("epochs").at(0);
  IMERGE_CHECK(epoch.contains("distributed"), log, ": no 'distributed' breakdown in epoch 1");
  const nlohmann::json& steps = epoch["distributed"]["per_iteration"];
  // The steady state: after the warm-up and the step that rebuilds the plan.
  auto steady = [&](const char* key) {
    std::vector<double> values = steps.at(key).get<std::vector<double>>();
    const size_t skip = static_cast<size_t>(options.warmupSteps + 1);
    IMERGE_CHECK(values.size() > skip, log, ": ", values.size(), " iterations, but ", skip,
                 " are warm-up; raise --max-steps");
    values.erase(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(skip));
    return values;
  };
  MeasuredRun run;
  run.row.model = model;
  run.row.workers = workers;
  run.row.strategy = strategy;
  run.row.source = "measured";
  run.row.iterationSeconds = median(steady("iteration_s"));
  run.row.communicationSeconds = median(steady("communication_s"));
  run.row.overlappedSeconds = median(steady("overlapped_s"));
  run.row.waitingSeconds = median(steady("waiting_s"));
  run.row.buckets = epoch["distributed"].at("buckets").get<size_t>();
  run.row.imagesPerSecond = workers * options.batchSize / run.row.iterationSeconds;
  run.profile = distributed::readComputeProfile(profilePath);
  return run;
}

}  // namespace imerge::apps
