// imerge-scale: SINGA-style scalability runs. For a model, a batch size per worker, a list of
// worker counts and a list of strategies it measures real runs where the workers exist (through
// mpirun and imerge-train) and simulates the rest (distributed/planning/simulator.h), and writes
// one table: PREFIX.csv and PREFIX.json.
//
//   imerge-scale --model resnet18 --image-size 32 --batch-size 32 --workers 1,2,4,8,16,32
//       --measure-up-to 2 --out scale                    measured at 1-2 ranks, simulated above
//   imerge-scale --preset imerge --flops-gflops 5000 --out imerge_study
//   imerge-scale --preset singa --profile resnet50.json --comm-model commbench.csv --out singa
//
// Compute profile (what one worker's forward, backward per tensor and optimizer cost): --profile
// FILE (from `imerge-train --profile`), else --flops-gflops X (the model's multiply-accumulates
// at X GFLOP/s, profileFromFlops), else the profiles the measured runs write: each measured
// (workers, strategy) is also simulated with its own run's profile, so the two rows compare
// like with like, and worker counts above the measured ones use the largest measured count's
// wfbp profile (on one machine, ranks share the cores, so that is the per-rank speed there).
//
// Communication truth at W workers: --comm-model FILE (samples as imerge-commbench writes
// them): at each worker count it holds, the piecewise fit of its samples; other counts come
// from the nearest measured count by the ring rule (ClusterProfile, cluster_profile.h).
// Without it, the built-in paper-like cluster (paperLikeClusterProfile: the IMerge paper's
// flat small-message costs, MG-WFBP's 10GbE line above 128 KiB). What mgwfbp and imerge plan
// with is fitted, as DataParallel fits it (beliefModelFor), from the file's samples at W when
// it has them and otherwise from the truth sampled at W over imerge-commbench's sizes.
//
// Rows: model, workers, strategy, source (measured|simulated), time per iteration, throughput
// (images/s over all workers), communication cost (all-reduce seconds per iteration), speedup
// (throughput over one worker's; a measured one-worker run when there is one, else the
// profile's compute time) and scaling efficiency (speedup / workers), then overlapped and
// waiting seconds and the bucket count.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "apps/planner_flags.h"
#include "core/error.h"
#include "distributed/planning/cluster_profile.h"
#include "distributed/planning/comm_model.h"
#include "distributed/planning/compute_profile.h"
#include "distributed/planning/measurement_sizes.h"
#include "distributed/planning/planner.h"
#include "distributed/planning/simulator.h"
#include "distributed/profiling/flops_profile.h"
#include "models/registry.h"

namespace {

using namespace imerge;
using namespace imerge::distributed;

struct Options {
  std::vector<std::string> models;
  int64_t batchSize = 32;
  int64_t imageSize = 224;
  std::vector<int> workers = {1, 2, 4, 8, 16, 32};
  std::vector<std::string> strategies = strategyNames();
  int measureUpTo = 0;
  int64_t maxSteps = 15;
  int64_t warmupSteps = 5;
  std::string profile;
  double flopsGigaflops = 0;
  std::string commModel;
  std::string out = "scale";
  std::string preset;
  std::string traceDir;
  std::string imergeTrain;
  std::string mpirun = "mpirun";
  // Instead of mpirun: a command that launches the ranks, with {ranks} replaced by their number,
  // e.g. "scripts/slow-network.sh --ranks {ranks} --rate 1gbit --".
  std::string launcher;
  PlannerOptions planner;
};

struct Row {
  std::string model;
  int workers = 0;
  std::string strategy;
  std::string source;  // "measured" or "simulated"
  double iterationSeconds = 0;
  double imagesPerSecond = 0;
  double communicationSeconds = 0;
  double speedup = 0;
  double scalingEfficiency = 0;
  double overlappedSeconds = 0;
  double waitingSeconds = 0;
  size_t buckets = 0;
};

// ---- input checks ----

void applyPreset(Options& options, const CLI::App& app) {
  if (options.preset.empty()) return;
  auto given = [&](const char* flag) { return app.count(flag) > 0; };
  if (options.preset == "imerge") {
    // The IMerge study: four ImageNet models, 4 to 32 workers, all six strategies.
    if (!given("--model")) options.models = {"resnet18", "vgg16", "alexnet", "resnet50"};
    if (!given("--workers")) options.workers = {4, 8, 16, 32};
    if (!given("--strategies")) options.strategies = strategyNames();
  } else {
    // SINGA's benchmark page: ResNet-50, 32 images per worker, time and throughput vs workers.
    if (!given("--model")) options.models = {"resnet50"};
    if (!given("--batch-size")) options.batchSize = 32;
    if (!given("--workers")) options.workers = {1, 2, 4, 8, 16, 32};
  }
}

void checkOptions(const Options& options) {
  IMERGE_CHECK(!options.models.empty(), "--model: no model given (or use --preset imerge|singa)");
  const std::vector<std::string> known = models::modelNames();
  for (const std::string& model : options.models) {
    if (std::find(known.begin(), known.end(), model) != known.end()) continue;
    std::string names;
    for (const std::string& name : known) names += (names.empty() ? "" : ", ") + name;
    IMERGE_FAIL("--model: unknown model '", model, "'; known models: ", names);
  }
  const std::vector<std::string>& strategies = strategyNames();
  for (const std::string& strategy : options.strategies) {
    if (std::find(strategies.begin(), strategies.end(), strategy) != strategies.end()) continue;
    IMERGE_FAIL("--strategies: unknown strategy '", strategy,
                "'; known: default, wfbp, fusion, priority, mgwfbp, imerge");
  }
  IMERGE_CHECK(!options.workers.empty(), "--workers: no worker counts given");
  for (int workers : options.workers) {
    IMERGE_CHECK(workers >= 1, "--workers: ", workers, " is not a worker count (at least 1)");
  }
  IMERGE_CHECK(!(options.profile.empty() && options.flopsGigaflops <= 0 && options.measureUpTo < 1),
               "no compute profile: give --profile FILE (from imerge-train --profile), "
               "--flops-gflops X (derive it from the model's FLOPs) or --measure-up-to N (measure "
               "real runs, which also write profiles)");
  IMERGE_CHECK(options.profile.empty() || options.models.size() == 1,
               "--profile: one profile describes one model, but ", options.models.size(),
               " models were asked for; use --flops-gflops for several");
}

// ---- communication ----

// The truth per worker count and the samples beliefs are fitted from.
class Cluster {
 public:
  explicit Cluster(const std::string& commModelPath) {
    if (commModelPath.empty()) {
      truth_ = std::make_unique<ClusterProfile>(paperLikeClusterProfile());
      return;
    }
    std::map<int, std::shared_ptr<const CommModel>> fits;
    for (const CommSample& sample : readCommSamplesCsv(commModelPath)) {
      samples_[sample.workers].push_back(sample);
    }
    for (const auto& [workers, samples] : samples_) {
      if (workers < 2) continue;  // one worker communicates nothing
      try {
        fits[workers] = std::make_shared<PiecewiseCommModel>(fitPiecewise(samples));
      } catch (const Error& error) {
        IMERGE_FAIL("--comm-model ", commModelPath, ": the samples at ", workers,
                    " workers cannot be fitted: ", error.what());
      }
    }
    IMERGE_CHECK(!fits.empty(), "--comm-model ", commModelPath,
                 ": no samples at 2 or more workers (column 'workers'); one worker says "
                 "nothing about the network");
    truth_ = std::make_unique<ClusterProfile>(commModelPath, std::move(fits));
  }

  const CommModel& truth() const { return *truth_; }
  std::string describe() const { return truth_->describe(); }

  std::vector<CommSample> beliefSamples(int workers) const {
    if (auto measured = samples_.find(workers); measured != samples_.end()) {
      return measured->second;
    }
    std::vector<CommSample> samples;
    for (size_t bytes : sweepMeasurementSizes(4, size_t{256} << 20)) {
      samples.push_back({bytes, workers, truth_->seconds(bytes, workers)});
    }
    return samples;
  }

 private:
  std::unique_ptr<ClusterProfile> truth_;
  std::map<int, std::vector<CommSample>> samples_;
};

// ---- real runs ----

std::string shellQuoted(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string defaultImergeTrain(const char* argv0) {
  std::error_code ignored;
  const std::filesystem::path self = std::filesystem::canonical("/proc/self/exe", ignored);
  const std::filesystem::path beside =
      (self.empty() ? std::filesystem::path(argv0) : self).parent_path() / "imerge-train";
  return beside.string();
}

struct MeasuredRun {
  Row row;
  ComputeProfile profile;
};

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values.empty() ? 0.0 : values[values.size() / 2];
}

// One real run: `imerge-train` in one process (workers == 1, through --profile's one-process
// DataParallel so the same breakdown is logged) or `mpirun -np workers imerge-train --dist`.
MeasuredRun measure(const Options& options, const std::string& model, int workers,
                    const std::string& strategy, const std::string& scratch) {
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
  if (workers > 1) command += " --dist " + strategy;
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
  run.row = {model, workers, strategy, "measured"};
  run.row.iterationSeconds = median(steady("iteration_s"));
  run.row.communicationSeconds = median(steady("communication_s"));
  run.row.overlappedSeconds = median(steady("overlapped_s"));
  run.row.waitingSeconds = median(steady("waiting_s"));
  run.row.buckets = epoch["distributed"].at("buckets").get<size_t>();
  run.row.imagesPerSecond = workers * options.batchSize / run.row.iterationSeconds;
  run.profile = readComputeProfile(profilePath);
  return run;
}

// ---- simulation ----

Row simulated(const std::string& model, int workers, const std::string& strategy,
              const ComputeProfile& profile, const Cluster& cluster, const Options& options,
              double singleWorkerSeconds) {
  const std::unique_ptr<Planner> planner = makePlanner(strategy, options.planner);
  const std::unique_ptr<CommModel> belief =
      beliefModelFor(strategy, cluster.beliefSamples(std::max(workers, 2)));
  const Plan plan = planner->plan(profile.tensors, *belief, workers);
  const SimResult result =
      simulate(plan, profile, cluster.truth(), workers, {.batchPerWorker = options.batchSize});
  if (!options.traceDir.empty()) {
    writeSimTrace(
        detail::concat(options.traceDir, "/", model, "_", strategy, "_", workers, "w.json"), result,
        detail::concat(model, " ", strategy, " ", workers, " workers (simulated)"));
  }
  Row row{model, workers, strategy, "simulated"};
  row.iterationSeconds = result.iterationSeconds;
  row.imagesPerSecond = result.imagesPerSecond;
  row.communicationSeconds = result.communicationSeconds;
  row.overlappedSeconds = result.overlappedSeconds;
  row.waitingSeconds = result.waitingSeconds;
  row.buckets = result.buckets;
  row.speedup = workers * singleWorkerSeconds / result.iterationSeconds;
  row.scalingEfficiency = row.speedup / workers;
  return row;
}

// ---- output ----

void writeTables(const std::string& prefix, const std::vector<Row>& rows,
                 const nlohmann::json& config) {
  const std::string csvPath = prefix + ".csv";
  std::ofstream csv(csvPath);
  IMERGE_CHECK(csv.is_open(), "--out: cannot write ", csvPath);
  csv << "model,workers,strategy,source,seconds_per_iteration,images_per_second,"
         "communication_seconds,speedup,scaling_efficiency,overlapped_seconds,waiting_seconds,"
         "buckets\n";
  csv.precision(6);
  nlohmann::json jsonRows = nlohmann::json::array();
  for (const Row& row : rows) {
    csv << row.model << "," << row.workers << "," << row.strategy << "," << row.source << ","
        << row.iterationSeconds << "," << row.imagesPerSecond << "," << row.communicationSeconds
        << "," << row.speedup << "," << row.scalingEfficiency << "," << row.overlappedSeconds << ","
        << row.waitingSeconds << "," << row.buckets << "\n";
    jsonRows.push_back({{"model", row.model},
                        {"workers", row.workers},
                        {"strategy", row.strategy},
                        {"source", row.source},
                        {"seconds_per_iteration", row.iterationSeconds},
                        {"images_per_second", row.imagesPerSecond},
                        {"communication_seconds", row.communicationSeconds},
                        {"speedup", row.speedup},
                        {"scaling_efficiency", row.scalingEfficiency},
                        {"overlapped_seconds", row.overlappedSeconds},
                        {"waiting_seconds", row.waitingSeconds},
                        {"buckets", row.buckets}});
  }
  IMERGE_CHECK(csv.good(), "--out: writing ", csvPath, " failed");
  const std::string jsonPath = prefix + ".json";
  std::ofstream json(jsonPath);
  IMERGE_CHECK(json.is_open(), "--out: cannot write ", jsonPath);
  json << nlohmann::json{{"config", config}, {"rows", std::move(jsonRows)}}.dump(1) << "\n";
  IMERGE_CHECK(json.good(), "--out: writing ", jsonPath, " failed");
}

void printRow(const Row& row, size_t done, size_t total) {
  std::printf(
      "[%zu/%zu] %-9s %3d workers %-8s %-9s %9.2f ms/iter %9.1f img/s  comm %8.2f ms  "
      "speedup %6.2f (%3.0f%%)\n",
      done, total, row.model.c_str(), row.workers, row.strategy.c_str(), row.source.c_str(),
      1e3 * row.iterationSeconds, row.imagesPerSecond, 1e3 * row.communicationSeconds, row.speedup,
      100 * row.scalingEfficiency);
  std::fflush(stdout);
}

int run(Options& options) {
  checkOptions(options);
  const Cluster cluster(options.commModel);
  std::cout << "communication truth: " << cluster.describe() << "\n";
  if (!options.traceDir.empty()) std::filesystem::create_directories(options.traceDir);
  const std::string scratch = options.out + ".runs";
  if (options.measureUpTo >= 1) {
    std::filesystem::create_directories(scratch);
    IMERGE_CHECK(std::filesystem::exists(options.imergeTrain),
                 "--imerge-train: ", options.imergeTrain,
                 " does not exist; build imerge-train or name it");
  }
  ComputeProfile given;
  if (!options.profile.empty()) {
    given = readComputeProfile(options.profile);
    IMERGE_CHECK(given.batchPerWorker == 0 || given.batchPerWorker == options.batchSize,
                 "--profile ", options.profile, ": measured at batch ", given.batchPerWorker,
                 " per worker, but --batch-size is ", options.batchSize);
  }

  std::vector<int> workerCounts = options.workers;
  std::sort(workerCounts.begin(), workerCounts.end());
  workerCounts.erase(std::unique(workerCounts.begin(), workerCounts.end()), workerCounts.end());
  const size_t total = [&] {
    size_t rows = 0;
    for (int workers : workerCounts) {
      rows += options.strategies.size() * (workers <= options.measureUpTo ? 2 : 1);
    }
    return rows * options.models.size();
  }();

  std::vector<Row> rows;
  for (const std::string& model : options.models) {
    ComputeProfile flops;
    if (options.profile.empty() && options.flopsGigaflops > 0) {
      const int64_t classes = options.imageSize <= 64 ? 10 : 1000;  // as the synthetic data
      auto network = models::buildModel(
          model, {.inChannels = 3, .classes = classes, .smallImages = options.imageSize <= 64});
      std::cout << model << ": counting FLOPs at " << options.imageSize << "x" << options.imageSize
                << "\n";
      flops = profileFromFlops(*network, {3, options.imageSize, options.imageSize},
                               options.batchSize, options.flopsGigaflops);
      flops.model = model;
    }
    // The profile for counts not measured: given, from FLOPs, or the largest measured count's.
    ComputeProfile profile = options.profile.empty() ? flops : given;
    std::optional<double> measuredSingle;
    std::optional<MeasuredRun> singleRun;  // one worker runs no strategy: measured once
    for (int workers : workerCounts) {
      const bool measured = workers <= options.measureUpTo;
      std::map<std::string, ComputeProfile> measuredProfiles;
      for (const std::string& strategy : options.strategies) {
        if (!measured) continue;
        MeasuredRun run = workers == 1 && singleRun
                              ? *singleRun
                              : measure(options, model, workers, strategy, scratch);
        run.row.strategy = strategy;
        if (workers == 1) {
          singleRun = run;
          measuredSingle = run.row.iterationSeconds;
        }
        const double single = measuredSingle ? *measuredSingle : run.profile.computeSeconds();
        run.row.speedup = workers * single / run.row.iterationSeconds;
        run.row.scalingEfficiency = run.row.speedup / workers;
        rows.push_back(run.row);
        printRow(rows.back(), rows.size(), total);
        measuredProfiles[strategy] = run.profile;
        // The same (workers, strategy) simulated on its own run's profile, to compare.
        rows.push_back(simulated(model, workers, strategy, run.profile, cluster, options,
                                 measuredSingle ? *measuredSingle : run.profile.computeSeconds()));
        printRow(rows.back(), rows.size(), total);
      }
      if (measured && options.profile.empty() && options.flopsGigaflops <= 0) {
        profile = measuredProfiles.count("wfbp") ? measuredProfiles["wfbp"]
                                                 : measuredProfiles.begin()->second;
      }
      if (measured) continue;
      for (const std::string& strategy : options.strategies) {
        rows.push_back(simulated(model, workers, strategy, profile, cluster, options,
                                 measuredSingle ? *measuredSingle : profile.computeSeconds()));
        printRow(rows.back(), rows.size(), total);
      }
    }
  }

  nlohmann::json config = {
      {"models", options.models},         {"batch_per_worker", options.batchSize},
      {"image_size", options.imageSize},  {"workers", workerCounts},
      {"strategies", options.strategies}, {"measured_up_to", options.measureUpTo},
      {"profile", options.profile},       {"flops_gflops", options.flopsGigaflops},
      {"comm_model", options.commModel},  {"communication_truth", cluster.describe()},
      {"preset", options.preset}};
  writeTables(options.out, rows, config);
  std::cout << "wrote " << options.out << ".csv and " << options.out << ".json (" << rows.size()
            << " rows)\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  options.imergeTrain = defaultImergeTrain(argv[0]);
  CLI::App app{"imerge-scale: measured and simulated scalability of the strategies"};
  app.add_option("--model", options.models, "model name(s), e.g. resnet18 (comma-separated)")
      ->delimiter(',');
  app.add_option("--batch-size", options.batchSize, "images per worker and iteration")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--image-size", options.imageSize,
                 "image side; 64 or less uses the models' small-image stems")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--workers", options.workers, "worker counts, e.g. 1,2,4,8,16,32")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--strategies", options.strategies,
                 "strategies (default all six: default,wfbp,fusion,priority,mgwfbp,imerge)")
      ->delimiter(',');
  app.add_option("--measure-up-to", options.measureUpTo,
                 "measure real runs (mpirun imerge-train) at worker counts up to this one")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--max-steps", options.maxSteps, "steps of each measured run")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--warmup-steps", options.warmupSteps,
                 "warm-up steps of each measured run (left out of its figures)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--profile", options.profile, "measured compute profile (imerge-train --profile)")
      ->check(CLI::ExistingFile);
  app.add_option("--flops-gflops", options.flopsGigaflops,
                 "derive the compute profile from the model's FLOPs at this many GFLOP/s")
      ->check(CLI::PositiveNumber);
  app.add_option("--comm-model", options.commModel,
                 "measured all-reduce samples (bytes,workers,seconds CSV, imerge-commbench): the "
                 "simulation's truth; default: the built-in paper-like cluster")
      ->check(CLI::ExistingFile);
  app.add_option("--out", options.out, "write PREFIX.csv and PREFIX.json")->capture_default_str();
  app.add_option("--preset", options.preset,
                 "imerge: resnet18, vgg16, alexnet, resnet50 at 4-32 workers, all strategies; "
                 "singa: resnet50, batch 32, 1-32 workers")
      ->check(CLI::IsMember({"imerge", "singa"}));
  app.add_option("--trace-dir", options.traceDir,
                 "write each simulated timeline as a Chrome trace into this folder");
  app.add_option("--imerge-train", options.imergeTrain, "the imerge-train binary for real runs")
      ->capture_default_str();
  app.add_option("--mpirun", options.mpirun, "the mpirun of real runs")->capture_default_str();
  app.add_option("--launcher", options.launcher,
                 "launch real runs with this command instead of mpirun, {ranks} replaced by the "
                 "rank count (e.g. \"scripts/slow-network.sh --ranks {ranks} --rate 1gbit --\")");
  apps::addPlannerFlags(app, options.planner);
  CLI11_PARSE(app, argc, argv);
  try {
    applyPreset(options, app);
    return run(options);
  } catch (const std::exception& error) {
    std::cerr << "imerge-scale: error: " << error.what() << "\n";
    return 1;
  }
}
