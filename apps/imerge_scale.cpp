// imerge-scale: SINGA-style scalability studies. For models, a batch size per worker, worker
// counts and strategies it measures real runs where the workers exist (mpirun imerge-train) and
// simulates the rest (distributed/planning/simulator.h), and writes one table: PREFIX.csv and
// PREFIX.json (docs/scalability.md).
//
//   imerge-scale --preset imerge-paper --out paper
//   imerge-scale --preset ddl-resnet50-10gbe --out ddl
//   imerge-scale --model resnet18,vgg16 --device-gflops resnet18=3069,vgg16=29053
//       --cluster 56gb-ib --workers 4,8,16,32 --belief mgwfbp=linear-all --out study
//   imerge-scale --model resnet18 --image-size 32 --batch-size 32 --workers 1,2,4,8
//       --measure-up-to 2 --cluster commbench.csv --out scale     measured at 1-2 ranks
//
// The inputs, each in its own file:
//   compute      apps/scale/compute_inputs.h (--device-gflops, --single-worker-images-per-s,
//                --profile per model; or the profiles real runs write: each measured (workers,
//                strategy) is also simulated with its own run's profile, so the two rows compare
//                like with like, and larger counts use the largest measured count's wfbp profile)
//   cluster      distributed/planning/cluster_catalog.h (--cluster FILE|NAME; the simulation's
//                truth, as given)
//   beliefs      distributed/planning/belief.h (--belief STRATEGY=SOURCE; what each planner
//                plans with, by default what its original system uses)
//   presets      apps/scale/presets.h
//   contention   distributed/planning/measured_contention.h (--contention FILE, from
//                imerge-commbench --beside-compute: an all-reduce's cost beside compute and the
//                compute slowdown beside an all-reduce; a profile from a run that communicated
//                holds the slowdown already and is not slowed again)
// --startup-scale and --bandwidth-scale sweep the cluster: every combination of the listed
// factors is simulated (the imerge-versus-mgwfbp map of docs/scalability.md).
//
// Rows (apps/scale/scale_table.h): model, workers, strategy, belief, source (measured,
// simulated or published), time per iteration, throughput (images/s over all workers),
// communication (all-reduce seconds per iteration), speedup (throughput over one worker's: a
// measured one-worker run when there is one, else the profile's compute time), scaling
// efficiency (speedup / workers), overlapped and waiting seconds, buckets, how the cluster's
// cost at that count was obtained, and the sweep's factors.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "apps/flag_checks.h"
#include "apps/planner_flags.h"
#include "apps/scale/compute_inputs.h"
#include "apps/scale/measured_run.h"
#include "apps/scale/presets.h"
#include "apps/scale/scale_table.h"
#include "core/error.h"
#include "distributed/planning/belief.h"
#include "distributed/planning/cluster_catalog.h"
#include "distributed/planning/measured_contention.h"
#include "distributed/planning/planner.h"
#include "distributed/planning/readable_units.h"
#include "distributed/planning/simulator.h"
#include "models/registry.h"

namespace {

using namespace imerge;
using namespace imerge::apps;
using namespace imerge::distributed;

constexpr const char* kDefaultCluster = "paper-small+10gbe";

struct Options {
  std::vector<std::string> models;
  std::vector<int> workers = {1, 2, 4, 8, 16, 32};
  std::vector<std::string> strategies = strategyNames();
  int measureUpTo = 0;
  ComputeInputs compute;
  std::string cluster = kDefaultCluster;
  std::string contention;  // --contention FILE; empty: none modelled
  // --reduce-scatter-model, --all-gather-model: imerge-overlap's halves, measured; empty: the
  // ring rule's halves of the all-reduce.
  std::string reduceScatterModel, allGatherModel;
  std::vector<std::string> beliefs;
  std::vector<double> startupScales = {1};
  std::vector<double> bandwidthScales = {1};
  std::string out = "scale";
  std::string preset;
  std::string traceDir;
  RealRunSettings real;  // also the batch and image size of simulated rows
};

std::string joined(const std::vector<std::string>& names) {
  std::string list;
  for (const std::string& name : names) list += (list.empty() ? "" : ", ") + name;
  return list;
}

// ---- input checks ----

void applyPreset(Options& options, const CLI::App& app) {
  if (options.preset.empty()) return;
  const Preset& preset = presetNamed(options.preset);
  auto given = [&](const char* flag) { return app.count(flag) > 0; };
  if (!given("--model")) options.models = preset.models;
  if (!given("--batch-size")) options.real.batchSize = preset.batchSize;
  if (!given("--workers")) options.workers = preset.workers;
  if (!given("--cluster") && !preset.cluster.empty()) options.cluster = preset.cluster;
  const bool computeGiven = given("--device-gflops") || given("--single-worker-images-per-s") ||
                            given("--profile") || given("--measure-up-to");
  if (!computeGiven)
    options.compute.singleWorkerImagesPerSecond = preset.singleWorkerImagesPerSecond;
}

void checkOptions(const Options& options) {
  IMERGE_CHECK(!options.models.empty(), "--model: no model given (or use --preset)");
  const std::vector<std::string> known = models::modelNames();
  for (const std::string& model : options.models) {
    IMERGE_CHECK(std::find(known.begin(), known.end(), model) != known.end(),
                 "--model: unknown model '", model, "'; known models: ", joined(known));
  }
  const std::vector<std::string>& strategies = strategyNames();
  for (const std::string& strategy : options.strategies) {
    IMERGE_CHECK(std::find(strategies.begin(), strategies.end(), strategy) != strategies.end(),
                 "--strategies: unknown strategy '", strategy, "'; known: ", joined(strategies));
  }
  IMERGE_CHECK(!options.workers.empty(), "--workers: no worker counts given");
  for (int workers : options.workers) {
    IMERGE_CHECK(workers >= 1, "--workers: ", workers, " is not a worker count (at least 1)");
  }
}

// The belief source of every strategy, --fusion-bytes standing for fusion's when given.
std::map<std::string, std::string> chooseBeliefs(Options& options, const CLI::App& app) {
  std::map<std::string, std::string> beliefs = parseBeliefFlag(options.beliefs);
  const bool fusionBytesGiven = app.count("--fusion-bytes") > 0;
  if (beliefs.count("fusion")) {
    IMERGE_CHECK(!fusionBytesGiven, "--belief fusion=", beliefs["fusion"],
                 " and --fusion-bytes both set fusion's threshold; give one");
    options.real.planner.fusionBytes = fusionThresholdBytes(beliefs["fusion"]);
  }
  for (const std::string& strategy : strategyNames()) {
    beliefs.emplace(strategy, defaultBeliefSource(strategy));
  }
  if (fusionBytesGiven) {
    beliefs["fusion"] = detail::concat("fusion-bytes-", options.real.planner.fusionBytes);
  }
  return beliefs;
}

// ---- the study ----

struct Study {
  const Options& options;
  std::map<std::string, std::string> beliefs;
  ClusterInput cluster;
  std::optional<MeasuredContention> contention;
  std::optional<ClusterInput> reduceScatter, allGather;  // both or neither

  // The model `strategy` plans with at `workers` on `network` (null for plans by sizes alone).
  std::shared_ptr<const CommModel> beliefAt(const ClusterInput& network,
                                            const std::string& strategy, int workers) const {
    const std::string& source = beliefs.at(strategy);
    return beliefModel(source.rfind("fusion-bytes-", 0) == 0 ? "sizes-only" : source,
                       network.beliefSamples(workers), network.sharedTruth());
  }

  // What imerge-overlap's split halves cost beside `allReduce` on the network scaled by
  // (startupScale, bandwidthScale): the truth, or what `strategy` believes at `workers`.
  CollectiveCosts splitCosts(std::shared_ptr<const CommModel> allReduce,
                             const std::string& strategy, int workers, double startupScale,
                             double bandwidthScale, bool belief) const {
    if (!reduceScatter) return ringSplitCosts(std::move(allReduce));
    auto half = [&](const ClusterInput& measured) {
      const bool unscaled = startupScale == 1 && bandwidthScale == 1;
      const ClusterInput network =
          unscaled ? measured : measured.withScaledCosts(startupScale, bandwidthScale);
      return belief ? beliefAt(network, strategy, workers)
                    : std::shared_ptr<const CommModel>(network.sharedTruth());
    };
    return {std::move(allReduce), half(*reduceScatter), half(*allGather)};
  }

  ScaleRow simulated(const std::string& model, int workers, const std::string& strategy,
                     const ComputeProfile& profile, const ClusterInput& network,
                     double singleWorkerSeconds, double startupScale, double bandwidthScale,
                     bool profileSlowedDown) const {
    const std::unique_ptr<Planner> planner = makePlanner(strategy, options.real.planner);
    const auto belief = beliefAt(network, strategy, std::max(workers, 2));
    const Plan plan = planner->plan(
        profile,
        splitCosts(belief, strategy, std::max(workers, 2), startupScale, bandwidthScale, true),
        workers);
    const CollectiveCosts truth =
        splitCosts(network.sharedTruth(), strategy, workers, startupScale, bandwidthScale, false);
    SimOptions simOptions{.batchPerWorker = options.real.batchSize,
                          .reduceScatter = truth.reduceScatter.get(),
                          .allGather = truth.allGather.get()};
    if (contention) simOptions.contention = contention->at(workers, profileSlowedDown);
    const SimResult result = simulate(plan, profile, network.truth(), workers, simOptions);
    if (!options.traceDir.empty()) {
      const std::string scales = startupScale == 1 && bandwidthScale == 1
                                     ? ""
                                     : detail::concat("_s", startupScale, "_b", bandwidthScale);
      writeSimTrace(detail::concat(options.traceDir, "/", model, "_", strategy, "_", workers, "w",
                                   scales, ".json"),
                    result,
                    detail::concat(model, " ", strategy, " ", workers, " workers (simulated)"));
    }
    ScaleRow row{.model = model,
                 .workers = workers,
                 .strategy = strategy,
                 .belief = beliefs.at(strategy),
                 .source = "simulated"};
    row.iterationSeconds = result.iterationSeconds;
    row.imagesPerSecond = result.imagesPerSecond;
    row.communicationSeconds = result.communicationSeconds;
    row.overlappedSeconds = result.overlappedSeconds;
    row.waitingSeconds = result.waitingSeconds;
    row.buckets = result.buckets;
    row.speedup = workers * singleWorkerSeconds / result.iterationSeconds;
    row.scalingEfficiency = row.speedup / workers;
    row.clusterTruth = network.truthAt(workers);
    row.startupScale = startupScale;
    row.bandwidthScale = bandwidthScale;
    return row;
  }
};

// What every strategy believes beside the truth, at each worker count of the study.
nlohmann::json reportBeliefs(const Study& study, const std::vector<int>& workerCounts) {
  nlohmann::json report = nlohmann::json::object();
  for (int workers : workerCounts) {
    if (workers < 2) continue;
    nlohmann::json atCount = {{"truth", study.cluster.truth().modelFor(workers).describe() + " (" +
                                            study.cluster.truthAt(workers) + ")"}};
    std::cout << workers << " workers: truth " << atCount["truth"].get<std::string>() << "\n";
    for (const std::string& strategy : study.options.strategies) {
      const std::string& source = study.beliefs.at(strategy);
      const bool sizesOnly = !makePlanner(strategy, study.options.real.planner)->usesTimings();
      const std::string text =
          sizesOnly
              ? (source.rfind("fusion-bytes-", 0) == 0
                     ? "fusion threshold " + readableBytes(study.options.real.planner.fusionBytes) +
                           " (--fusion-bytes)"
                     : describeBeliefSource(source))
              : describeBeliefSource(source) + ": " +
                    study.beliefAt(study.cluster, strategy, workers)->describe();
      std::cout << "  " << strategy << " believes " << source << ": " << text << "\n";
      atCount[strategy] = {{"source", source}, {"model", text}};
    }
    report[std::to_string(workers)] = std::move(atCount);
  }
  return report;
}

// Where more workers give less throughput, a note that says so, with the cluster's startup (the
// cost of a message of no bytes, paid once per message) and its cost of the model's whole
// gradient at both counts: the reason, when the published constants force it.
std::vector<std::string> fewerImagesWithMoreWorkers(const std::vector<ScaleRow>& rows,
                                                    const ClusterInput& cluster,
                                                    const std::map<std::string, size_t>& bytes) {
  using Key = std::tuple<std::string, std::string, std::string, double, double>;
  std::map<Key, std::map<int, const ScaleRow*>> series;
  for (const ScaleRow& row : rows) {
    series[{row.model, row.strategy, row.source, row.startupScale, row.bandwidthScale}]
          [row.workers] = &row;
  }
  std::vector<std::string> notes;
  for (const auto& [key, byWorkers] : series) {
    const ScaleRow* previous = nullptr;
    for (const auto& [workers, row] : byWorkers) {
      if (previous != nullptr && row->imagesPerSecond < previous->imagesPerSecond &&
          std::get<3>(key) == 1 && std::get<4>(key) == 1 && bytes.count(row->model)) {
        const size_t total = bytes.at(row->model);
        notes.push_back(detail::concat(
            row->model, " ", row->strategy, " (", row->source, "): ", workers, " workers give ",
            static_cast<int>(row->imagesPerSecond), " images/s, below the ",
            static_cast<int>(previous->imagesPerSecond), " of ", previous->workers,
            " workers; the cluster's startup per message is ",
            readableSeconds(cluster.truth().seconds(0, workers)), " at ", workers,
            " workers against ", readableSeconds(cluster.truth().seconds(0, previous->workers)),
            " at ", previous->workers, ", and the whole gradient (", readableBytes(total),
            ") costs ", readableSeconds(cluster.truth().seconds(total, workers)), " at ", workers,
            " workers against ", readableSeconds(cluster.truth().seconds(total, previous->workers)),
            " at ", previous->workers, " (", cluster.truthAt(workers), " / ",
            cluster.truthAt(previous->workers), ")"));
      }
      previous = row;
    }
  }
  return notes;
}

int run(Options& options, const CLI::App& app) {
  checkOptions(options);
  Study study{options,
              chooseBeliefs(options, app),
              loadCluster(options.cluster),
              std::nullopt,
              std::nullopt,
              std::nullopt};
  IMERGE_CHECK(options.reduceScatterModel.empty() == options.allGatherModel.empty(),
               options.reduceScatterModel.empty() ? "--all-gather-model" : "--reduce-scatter-model",
               " was given without ",
               options.reduceScatterModel.empty() ? "--reduce-scatter-model" : "--all-gather-model",
               "; imerge-overlap's split buckets need both halves measured (or neither: the "
               "ring rule's halves of the all-reduce)");
  if (!options.reduceScatterModel.empty()) {
    study.reduceScatter = loadCluster(options.reduceScatterModel, "--reduce-scatter-model");
    study.allGather = loadCluster(options.allGatherModel, "--all-gather-model");
  }
  // Real runs plan from the measurements the simulation's beliefs sample, not from a start-up
  // measurement of their own (5 repetitions of fewer sizes): otherwise a run and its
  // simulation can plan different buckets (2 ranks over 1 Gbit/s: imerge 21 against 8).
  if (study.cluster.measured()) options.real.commModel = options.cluster;
  if (study.reduceScatter && study.reduceScatter->measured() && study.allGather->measured()) {
    options.real.reduceScatterModel = options.reduceScatterModel;
    options.real.allGatherModel = options.allGatherModel;
  }
  std::cout << "communication truth: " << study.cluster.truth().describe() << "\n";
  nlohmann::json contentionReport = nullptr;
  if (!options.contention.empty()) {
    IMERGE_CHECK(options.startupScales == std::vector<double>{1} &&
                     options.bandwidthScales == std::vector<double>{1},
                 "--contention ", options.contention,
                 " was measured on the cluster as it is; it cannot be combined with "
                 "--startup-scale or --bandwidth-scale");
    study.contention = MeasuredContention::load(options.contention, "--contention");
    contentionReport = {{"file", options.contention},
                        {"beside_compute", study.contention->besideCompute().describe()}};
    std::cout << "contention: all-reduce beside compute "
              << study.contention->besideCompute().describe() << "\n";
    for (int workers : options.workers) {
      if (workers < 2) continue;
      const double slowdown = study.contention->computeSlowdownAt(workers);
      contentionReport["compute_slowdown"][std::to_string(workers)] = slowdown;
      std::cout << "contention: compute " << slowdown << "x slower beside an all-reduce at "
                << workers << " workers (not applied to profiles of runs that communicated)\n";
    }
  }
  std::vector<int> workerCounts = options.workers;
  std::sort(workerCounts.begin(), workerCounts.end());
  workerCounts.erase(std::unique(workerCounts.begin(), workerCounts.end()), workerCounts.end());
  // Every input is checked (and every FLOPs count made) before the long belief report.
  const ComputeProfiles compute(options.compute, options.models, options.real.batchSize,
                                options.real.imageSize, options.measureUpTo >= 1);
  const nlohmann::json beliefReport = reportBeliefs(study, workerCounts);

  if (!options.traceDir.empty()) std::filesystem::create_directories(options.traceDir);
  options.real.scratch = options.out + ".runs";
  if (options.measureUpTo >= 1) {
    std::filesystem::create_directories(options.real.scratch);
    IMERGE_CHECK(std::filesystem::exists(options.real.imergeTrain),
                 "--imerge-train: ", options.real.imergeTrain,
                 " does not exist; build imerge-train or name it");
  }
  // Every combination of the sweep's factors; the real runs belong to the unscaled cluster.
  std::vector<std::pair<double, double>> scales;
  for (double startup : options.startupScales) {
    for (double bandwidth : options.bandwidthScales) scales.emplace_back(startup, bandwidth);
  }
  std::vector<ClusterInput> networks;
  for (const auto& [startup, bandwidth] : scales) {
    networks.push_back(study.cluster.withScaledCosts(startup, bandwidth));
  }
  const size_t total = [&] {
    size_t perModel = 0;
    for (int workers : workerCounts) {
      const bool unscaled = scales.size() == 1 && scales[0] == std::pair(1.0, 1.0);
      // A measured cell: the run, its own profile simulated, then the scaled clusters.
      const bool measured = workers <= options.measureUpTo;
      perModel += options.strategies.size() *
                  (measured ? 2 + (unscaled ? 0 : scales.size()) : scales.size());
    }
    const size_t published =
        options.preset.empty() ? 0 : presetNamed(options.preset).published.size();
    return perModel * options.models.size() + published;
  }();
  const bool printEveryRow = total <= 400;  // a sweep prints one line per model instead

  std::vector<ScaleRow> rows;
  std::map<std::string, size_t> gradientBytes;
  auto add = [&](ScaleRow row) {
    rows.push_back(std::move(row));
    if (printEveryRow) printScaleRow(rows.back(), rows.size(), total);
  };
  for (const std::string& model : options.models) {
    std::optional<ComputeProfile> profile = compute.profileFor(model);
    bool profileSlowedDown = false;  // measured in a run that communicated
    std::cout << model << ": compute from " << compute.sourceOf(model) << "\n";
    std::optional<double> measuredSingle;
    std::optional<MeasuredRun> singleRun;  // one worker runs no strategy: measured once
    for (int workers : workerCounts) {
      const bool measured = workers <= options.measureUpTo;
      std::map<std::string, ComputeProfile> measuredProfiles;
      for (const std::string& strategy : options.strategies) {
        if (!measured) continue;
        MeasuredRun run = workers == 1 && singleRun
                              ? *singleRun
                              : measureRealRun(options.real, model, workers, strategy);
        run.row.strategy = strategy;
        run.row.belief = study.beliefs.at(strategy);
        run.row.clusterTruth = "measured";
        if (workers == 1) {
          singleRun = run;
          measuredSingle = run.row.iterationSeconds;
        }
        const double single = measuredSingle ? *measuredSingle : run.profile.computeSeconds();
        run.row.speedup = workers * single / run.row.iterationSeconds;
        run.row.scalingEfficiency = run.row.speedup / workers;
        add(run.row);
        measuredProfiles[strategy] = run.profile;
        // The same (workers, strategy) simulated on its own run's profile, to compare.
        add(study.simulated(model, workers, strategy, run.profile, study.cluster, single, 1, 1,
                            workers > 1));
      }
      if (measured && compute.sourceOf(model) == "measured runs") {
        IMERGE_CHECK(!measuredProfiles.empty(), "--strategies: none of ",
                     joined(options.strategies),
                     " runs for real, so no run measures the compute profile; add one that "
                     "does (wfbp, say) or give --profile");
        profile = measuredProfiles.count("wfbp") ? measuredProfiles["wfbp"]
                                                 : measuredProfiles.begin()->second;
        profileSlowedDown = workers > 1;
      }
      const bool measuredClusterOnly =
          measured && scales.size() == 1 && scales[0] == std::pair(1.0, 1.0);
      for (const std::string& strategy : options.strategies) {
        // A measured strategy's rows on the measured cluster came from its run above.
        if (measuredClusterOnly) continue;
        for (size_t s = 0; s < scales.size(); ++s) {
          add(study.simulated(model, workers, strategy, *profile, networks[s],
                              measuredSingle ? *measuredSingle : profile->computeSeconds(),
                              scales[s].first, scales[s].second, profileSlowedDown));
        }
      }
    }
    if (profile) {
      size_t bytes = 0;
      for (const TensorInfo& tensor : profile->tensors) bytes += tensor.bytes;
      gradientBytes[model] = bytes;
    }
    if (!printEveryRow) std::cout << model << ": " << rows.size() << " of " << total << " rows\n";
  }

  // A preset's measured figures, beside the simulation of the same cells.
  if (!options.preset.empty()) {
    for (const PublishedThroughput& cell : presetNamed(options.preset).published) {
      const auto single = compute.profileFor(cell.model);
      ScaleRow row{.model = cell.model,
                   .workers = cell.workers,
                   .strategy = cell.strategy,
                   .belief = "",
                   .source = "published"};
      row.imagesPerSecond = cell.imagesPerSecond;
      row.iterationSeconds = cell.workers * options.real.batchSize / cell.imagesPerSecond;
      const double singleSeconds = single ? single->computeSeconds() : 0;
      row.speedup =
          singleSeconds > 0 ? cell.imagesPerSecond * singleSeconds / options.real.batchSize : 0;
      row.scalingEfficiency = row.speedup / cell.workers;
      row.clusterTruth = "measured";
      add(row);
    }
  }

  const std::vector<std::string> notes =
      fewerImagesWithMoreWorkers(rows, study.cluster, gradientBytes);
  for (const std::string& note : notes) std::cout << "note: " << note << "\n";
  nlohmann::json compute_inputs = nlohmann::json::object();
  for (const std::string& model : options.models) compute_inputs[model] = compute.sourceOf(model);
  const nlohmann::json config = {{"models", options.models},
                                 {"batch_per_worker", options.real.batchSize},
                                 {"image_size", options.real.imageSize},
                                 {"workers", workerCounts},
                                 {"strategies", options.strategies},
                                 {"measured_up_to", options.measureUpTo},
                                 {"compute", compute_inputs},
                                 {"cluster", options.cluster},
                                 {"communication_truth", study.cluster.truth().describe()},
                                 {"contention", contentionReport},
                                 {"beliefs", beliefReport},
                                 {"startup_scales", options.startupScales},
                                 {"bandwidth_scales", options.bandwidthScales},
                                 {"preset", options.preset}};
  writeScaleTables(options.out, rows, config, notes);
  std::cout << "wrote " << options.out << ".csv and " << options.out << ".json (" << rows.size()
            << " rows)\n";
  return 0;
}

std::string clusterHelp() {
  std::string text =
      "the simulation's all-reduce cost: imerge-commbench samples, an a + bM table (FILE or "
      "FILE:NETWORK), SMALL+LARGE (a small-message table or paper-small, then a cluster), or "
      "a built-in name:";
  for (const BuiltInCluster& cluster : builtInClusters()) {
    text += "\n    " + cluster.name + ": " + cluster.description;
  }
  return text;
}

std::string beliefHelp() {
  std::string text =
      "what a strategy plans with, STRATEGY=SOURCE (comma-separated); the "
      "sources, the default first:";
  for (const std::string& strategy : strategyNames()) {
    text += "\n    " + strategy + ": " + joined(beliefSourcesFor(strategy));
  }
  return text;
}

std::string presetHelp() {
  std::string text = "a published setting:";
  for (const Preset& preset : presets()) text += "\n    " + preset.name + ": " + preset.description;
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  options.real.imergeTrain = imergeTrainBeside(argv[0]);
  CLI::App app{"imerge-scale: measured and simulated scalability of the strategies"};
  app.add_option("--model", options.models, "model name(s), e.g. resnet18 (comma-separated)")
      ->delimiter(',');
  app.add_option("--batch-size", options.real.batchSize, "images per worker and iteration")
      ->check(apps::wholeNumber(1, 1 << 20))
      ->capture_default_str();
  app.add_option("--image-size", options.real.imageSize,
                 "image side; 64 or less uses the models' small-image stems")
      ->check(apps::wholeNumber(16, 4096))
      ->capture_default_str();
  app.add_option("--workers", options.workers, "worker counts, e.g. 1,2,4,8,16,32")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--strategies", options.strategies,
                 "strategies (default all: " + joined(strategyNames()) + ")")
      ->delimiter(',');
  app.add_option("--measure-up-to", options.measureUpTo,
                 "measure real runs (mpirun imerge-train) at worker counts up to this one")
      ->check(apps::wholeNumber(0))
      ->capture_default_str();
  app.add_option("--max-steps", options.real.maxSteps, "steps of each measured run")
      ->check(apps::wholeNumber(1))
      ->capture_default_str();
  app.add_option("--warmup-steps", options.real.warmupSteps,
                 "warm-up steps of each measured run (left out of its figures)")
      ->check(apps::wholeNumber(1))
      ->capture_default_str();
  app.add_option("--profile", options.compute.profiles,
                 "measured compute profile(s) (imerge-train --profile), one per model")
      ->check(CLI::ExistingFile);
  app.add_option("--device-gflops,--flops-gflops", options.compute.deviceGflops,
                 "compute from each model's FLOPs at G GFLOP/s: G for every model, or MODEL=G,...")
      ->delimiter(',');
  app.add_option("--single-worker-images-per-s", options.compute.singleWorkerImagesPerSecond,
                 "compute brought to a published single-worker throughput: MODEL=X,...")
      ->delimiter(',');
  app.add_option("--cluster,--comm-model", options.cluster, clusterHelp())->capture_default_str();
  app.add_option("--reduce-scatter-model", options.reduceScatterModel,
                 "imerge-overlap: measured reduce-scatters of whole messages (imerge-commbench "
                 "--collective reduce-scatter), the truth and its belief; without: half the "
                 "all-reduce (the ring rule)")
      ->check(CLI::ExistingFile);
  app.add_option("--all-gather-model", options.allGatherModel,
                 "imerge-overlap: likewise for all-gathers (--collective all-gather)")
      ->check(CLI::ExistingFile);
  app.add_option("--contention", options.contention,
                 "compute and communication sharing cores: imerge-commbench --beside-compute "
                 "output (an all-reduce's cost beside compute, compute's slowdown beside one)");
  app.add_option("--belief", options.beliefs, beliefHelp())->delimiter(',');
  app.add_option("--startup-scale", options.startupScales,
                 "sweep: multiply every startup cost of the cluster by each factor")
      ->delimiter(',')
      ->check(apps::positiveNumber());
  app.add_option("--bandwidth-scale", options.bandwidthScales,
                 "sweep: multiply the cluster's bandwidth by each factor")
      ->delimiter(',')
      ->check(apps::positiveNumber());
  app.add_option("--out", options.out, "write PREFIX.csv and PREFIX.json")->capture_default_str();
  app.add_option("--preset", options.preset, presetHelp());
  app.add_option("--trace-dir", options.traceDir,
                 "write each simulated timeline as a Chrome trace into this folder");
  app.add_option("--imerge-train", options.real.imergeTrain,
                 "the imerge-train binary for real runs")
      ->capture_default_str();
  app.add_option("--mpirun", options.real.mpirun, "the mpirun of real runs")->capture_default_str();
  app.add_option("--launcher", options.real.launcher,
                 "launch real runs with this command instead of mpirun, {ranks} replaced by the "
                 "rank count (e.g. \"scripts/slow-network.sh --ranks {ranks} --rate 1gbit --\")");
  addPlannerFlags(app, options.real.planner);
  IMERGE_PARSE_FLAGS(app, argc, argv);
  try {
    applyPreset(options, app);
    return run(options, app);
  } catch (const std::exception& error) {
    std::cerr << "imerge-scale: error: " << error.what() << "\n";
    return 1;
  }
}
