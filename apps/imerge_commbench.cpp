// imerge-commbench: measures all-reduce time (or, with --collective, reduce-scatter or all-gather
// time) against message size and fits both communication models to it.
//
//   mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2
//       build/release/imerge-commbench --out commbench        host (MPI) and, with a GPU, NCCL
//   imerge-commbench --fit-only commbench.csv --out refit       refit a CSV, no MPI
//
// Under mpirun it sweeps float32 all-reduces from --min-bytes (4 B) to --max-bytes (256 MiB),
// two sizes per octave and four between 1 and 64 KiB where the cost has its knee
// (sweepMeasurementSizes), each size a warm-up and then up to --repetitions timed repetitions
// (fewer above 1 MiB, sweepRepetitions), each repetition counted at the slowest rank. Host
// buffers go through the MPI communicator; device buffers through the NCCL communicator (CUDA
// builds, one GPU per rank; without a GPU that backend is skipped with a message, or refused
// when it was asked for alone). It then fits, per backend, the linear model a + bM (fitLinear,
// what MG-WFBP plans with) and the piecewise model (fitPiecewise, what imerge plans with) and
// prints each fit's parameters and its RMS relative error (fitError).
//
// With --beside-compute every rank also runs --compute-threads busy threads (BusyCompute: small
// matrix products, training's compute as far as the cores can tell) for the whole sweep, so
// the samples are what an all-reduce costs while the cores compute (the contention of
// contended_schedule.h; imerge-scale --contention takes this file). Before the sweep the busy
// threads run 1 s with nothing communicated; each size's compute_slowdown is that rate over the
// rate while the size was measured, averaged over the ranks.
//
// Output (rank 0 only; the other ranks print nothing): PREFIX.csv (host samples) and
// PREFIX.nccl.csv (device samples), each readable by readCommSamplesCsv and so by
// `imerge-train --comm-model` (bytes,workers,seconds plus backend,repetitions,min_seconds,
// median_seconds,max_seconds; seconds is the median; compute_slowdown with --beside-compute),
// and PREFIX.json with every sample and
// every fit (scripts/plot_comm_model.py plots it).
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "apps/flag_checks.h"
#include "core/error.h"
#include "distributed/comm/mpi_communicator.h"
#include "distributed/planning/comm_model.h"
#include "distributed/planning/readable_units.h"
#include "distributed/runtime/busy_compute.h"
#include "distributed/runtime/comm_measurement.h"

#if IMERGE_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "core/cuda/cuda_device.h"
#include "distributed/comm/cuda/nccl_communicator.h"
#endif

namespace {

using namespace imerge;
using namespace imerge::distributed;

struct Options {
  size_t minBytes = 4;
  size_t maxBytes = size_t{256} << 20;
  int repetitions = 20;
  std::string out = "commbench";
  std::string backend = "both";
  std::string fitOnly;
  int segments = 3;
  double timeoutSeconds = 120;
  bool besideCompute = false;
  int computeThreads = 1;
  std::string collective = "all-reduce";
};

CollectiveKind collectiveNamed(const std::string& name) {
  if (name == "reduce-scatter") return CollectiveKind::ReduceScatter;
  if (name == "all-gather") return CollectiveKind::AllGather;
  return CollectiveKind::AllReduce;
}

// The measurements of one backend ("mpi" or "nccl") and where they were written.
struct BackendRun {
  std::string backend;
  std::string csvPath;
  std::vector<AllreduceMeasurement> measurements;  // empty for a refit: only samples exist
  std::vector<CommSample> samples;
  // --beside-compute: per measurement, the busy threads' rate alone over their rate while it
  // was measured (mean over the ranks); empty without.
  std::vector<double> computeSlowdown;
  double unitsPerSecondAlone = 0;
};

// ---- fits ----

nlohmann::json fitsJson(const std::vector<CommSample>& allSamples, int maxSegments,
                        const std::string& backend, bool print) {
  std::map<int, std::vector<CommSample>> byWorkers;
  for (const CommSample& sample : allSamples) byWorkers[sample.workers].push_back(sample);
  nlohmann::json fits = nlohmann::json::array();
  for (const auto& [workers, samples] : byWorkers) {
    std::set<size_t> sizes;
    for (const CommSample& sample : samples) sizes.insert(sample.bytes);
    if (print) {
      std::printf("\n%s, %d workers, %zu samples at %zu sizes:\n", backend.c_str(), workers,
                  samples.size(), sizes.size());
    }
    if (sizes.size() < 3) {
      if (print) std::printf("  no fits: the piecewise fit needs at least 3 sizes\n");
      continue;
    }
    const LinearCommModel linear = fitLinear(samples);
    const PiecewiseCommModel piecewise = fitPiecewise(samples, maxSegments);
    const double linearError = fitError(linear, samples);
    const double piecewiseError = fitError(piecewise, samples);
    if (print) {
      std::printf("  linear     RMS relative error %7.2f%%  %s\n", 100 * linearError,
                  linear.describe().c_str());
      std::printf("  piecewise  RMS relative error %7.2f%%  %s\n", 100 * piecewiseError,
                  piecewise.describe().c_str());
    }
    nlohmann::json segments = nlohmann::json::array();
    for (const PiecewiseCommModel::Segment& segment : piecewise.segments()) {
      segments.push_back({{"start_bytes", segment.startBytes},
                          {"intercept_seconds", segment.interceptSeconds},
                          {"slope_seconds_per_byte", segment.slopeSecondsPerByte}});
    }
    fits.push_back({{"workers", workers},
                    {"samples", samples.size()},
                    {"sizes", sizes.size()},
                    {"linear",
                     {{"alpha_seconds", linear.alphaSeconds()},
                      {"beta_seconds_per_byte", linear.betaSecondsPerByte()},
                      {"error", linearError},
                      {"describe", linear.describe()}}},
                    {"piecewise",
                     {{"flat_seconds", piecewise.flatSeconds()},
                      {"segments", std::move(segments)},
                      {"max_segments", maxSegments},
                      {"error", piecewiseError},
                      {"describe", piecewise.describe()}}},
                    {"better_fit", piecewiseError < linearError ? "piecewise" : "linear"}});
  }
  return fits;
}

// ---- output ----

void writeMeasurementsCsv(const BackendRun& run) {
  std::ofstream file(run.csvPath);
  IMERGE_CHECK(file.is_open(), run.csvPath, ": cannot open for writing (--out)");
  const bool slowdowns = !run.computeSlowdown.empty();
  file << "bytes,workers,seconds,backend,repetitions,min_seconds,median_seconds,max_seconds"
       << (slowdowns ? ",compute_slowdown\n" : "\n");
  char line[256];
  for (size_t i = 0; i < run.measurements.size(); ++i) {
    const AllreduceMeasurement& m = run.measurements[i];
    std::snprintf(line, sizeof line, "%zu,%d,%.9g,%s,%d,%.9g,%.9g,%.9g", m.bytes, m.workers,
                  m.medianSeconds, run.backend.c_str(), m.repetitions, m.minSeconds,
                  m.medianSeconds, m.maxSeconds);
    file << line;
    if (slowdowns) {
      std::snprintf(line, sizeof line, ",%.4f", run.computeSlowdown[i]);
      file << line;
    }
    file << "\n";
  }
  file.flush();
  IMERGE_CHECK(file.good(), run.csvPath, ": writing failed");
}

nlohmann::json runJson(const BackendRun& run, const Options& options, bool print) {
  nlohmann::json samples = nlohmann::json::array();
  if (run.measurements.empty()) {
    for (const CommSample& s : run.samples) {
      samples.push_back({{"bytes", s.bytes}, {"workers", s.workers}, {"seconds", s.seconds}});
    }
  }
  for (size_t i = 0; i < run.measurements.size(); ++i) {
    const AllreduceMeasurement& m = run.measurements[i];
    samples.push_back({{"bytes", m.bytes},
                       {"workers", m.workers},
                       {"seconds", m.medianSeconds},
                       {"repetitions", m.repetitions},
                       {"min_seconds", m.minSeconds},
                       {"median_seconds", m.medianSeconds},
                       {"max_seconds", m.maxSeconds}});
    if (!run.computeSlowdown.empty()) samples.back()["compute_slowdown"] = run.computeSlowdown[i];
  }
  nlohmann::json document = {{"backend", run.backend},
                             {"csv", run.csvPath},
                             {"samples", std::move(samples)},
                             {"fits", fitsJson(run.samples, options.segments, run.backend, print)}};
  if (!run.computeSlowdown.empty()) {
    document["beside_compute"] = {{"threads_per_rank", options.computeThreads},
                                  {"units_per_second_alone", run.unitsPerSecondAlone},
                                  {"unit", "64x64 float32 matrix product"}};
  }
  return document;
}

void writeJson(const std::string& path, nlohmann::json document) {
  std::ofstream file(path);
  IMERGE_CHECK(file.is_open(), path, ": cannot open for writing (--out)");
  file << document.dump(2) << "\n";
  file.flush();
  IMERGE_CHECK(file.good(), path, ": writing failed");
}

// ---- measuring ----

// Sweeps one backend and prints a line per size on rank 0.
BackendRun sweep(Communicator& communicator, const std::string& backend,
                 const AllreduceTimer& timer, const Options& options, const std::string& csvPath) {
  const std::vector<size_t> sizes = sweepMeasurementSizes(options.minBytes, options.maxBytes);
  const bool isMain = communicator.rank() == 0;
  if (isMain) {
    std::printf("\n%s %s among %d ranks: %zu sizes from %s to %s, up to %d repetitions\n",
                backend.c_str(), options.collective.c_str(), communicator.size(), sizes.size(),
                readableBytes(sizes.front()).c_str(), readableBytes(sizes.back()).c_str(),
                options.repetitions);
    std::fflush(stdout);
  }
  BackendRun run{backend, csvPath, {}, {}, {}, 0};
  // --beside-compute: the busy threads' rate with nothing communicated (every rank's threads
  // running, as in training), then theirs while each size is measured.
  using Clock = std::chrono::steady_clock;
  std::unique_ptr<BusyCompute> busy;
  uint64_t unitsAtMark = 0;
  Clock::time_point mark;
  // The busy threads' units per second since the last mark, which moves to now. A window in
  // which no unit finished counts as one unit: as slow as can be told.
  auto rateSinceMark = [&] {
    const uint64_t units = busy->unitsDone();
    const Clock::time_point now = Clock::now();
    const double rate = static_cast<double>(std::max<uint64_t>(units - unitsAtMark, 1)) /
                        std::chrono::duration<double>(now - mark).count();
    unitsAtMark = units;
    mark = now;
    return rate;
  };
  std::vector<double> localSlowdown;
  if (options.besideCompute) {
    communicator.barrier();
    busy = std::make_unique<BusyCompute>(options.computeThreads);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // threads started, caches warm
    rateSinceMark();
    std::this_thread::sleep_for(std::chrono::seconds(1));
    IMERGE_CHECK(busy->unitsDone() > unitsAtMark,
                 "--beside-compute: the busy threads did no work in 1 s; the machine is "
                 "overloaded");
    run.unitsPerSecondAlone = rateSinceMark();
  }
  run.measurements = measureAllreduceSweep(
      communicator, sizes, options.repetitions, timer,
      [&](const AllreduceMeasurement& m, size_t index) {
        if (busy) localSlowdown.push_back(run.unitsPerSecondAlone / rateSinceMark());
        if (!isMain) return;
        std::printf("  [%2zu/%zu] %10s x%-3d median %10s  min %10s  max %10s  %10s\n", index + 1,
                    sizes.size(), readableBytes(m.bytes).c_str(), m.repetitions,
                    readableSeconds(m.medianSeconds).c_str(), readableSeconds(m.minSeconds).c_str(),
                    readableSeconds(m.maxSeconds).c_str(),
                    readableBandwidth(static_cast<double>(m.bytes) / m.medianSeconds).c_str());
        std::fflush(stdout);
      });
  for (const AllreduceMeasurement& m : run.measurements) run.samples.push_back(m.sample());
  if (busy) {
    busy.reset();
    communicator.allreduceAverage(localSlowdown.data(), localSlowdown.size());
    run.computeSlowdown = std::move(localSlowdown);
  }
  return run;
}

#if IMERGE_HAVE_CUDA
void checkCuda(cudaError_t code, const char* call) {
  IMERGE_CHECK(code == cudaSuccess, "imerge-commbench: ", call,
               " failed: ", cudaGetErrorString(code));
}

// Device collectives through NCCL, timed on the device: an event before the first repetition
// and after each, all enqueued back to back on the communication stream (as nccl-tests do), so
// the figures are the collectives' own time, not the host poller's wake-ups. They average
// (ncclAvg) as gradients do; a sum costs the same.
AllreduceTimer ncclCollectiveTimer(NcclCommunicator& nccl, size_t maxBytes, CollectiveKind kind) {
  struct DeviceState {
    float* buffer = nullptr;
    std::vector<cudaEvent_t> events;
    ~DeviceState() {
      for (cudaEvent_t event : events) cudaEventDestroy(event);
      if (buffer) cudaFree(buffer);
    }
  };
  auto state = std::make_shared<DeviceState>();
  checkCuda(cudaSetDevice(nccl.device()), "cudaSetDevice");
  checkCuda(cudaMalloc(reinterpret_cast<void**>(&state->buffer), maxBytes), "cudaMalloc");
  checkCuda(cudaMemset(state->buffer, 0, maxBytes), "cudaMemset");
  return [&nccl, state, kind](CollectiveOps&, size_t bytes, int count) {
    checkCuda(cudaSetDevice(nccl.device()), "cudaSetDevice");  // the communication thread
    while (state->events.size() < static_cast<size_t>(count) + 1) {
      cudaEvent_t event = nullptr;
      checkCuda(cudaEventCreate(&event), "cudaEventCreate");
      state->events.push_back(event);
    }
    checkCuda(cudaEventRecord(state->events[0], nccl.commStream()), "cudaEventRecord");
    std::vector<WorkHandle> works;
    for (int rep = 0; rep < count; ++rep) {
      works.push_back(
          nccl.collectiveAsync(kind, state->buffer, bytes / sizeof(float), {}, "commbench"));
      checkCuda(cudaEventRecord(state->events[rep + 1], nccl.commStream()), "cudaEventRecord");
    }
    for (const WorkHandle& work : works) work->wait();
    checkCuda(cudaEventSynchronize(state->events[count]), "cudaEventSynchronize");
    std::vector<double> times;
    for (int rep = 0; rep < count; ++rep) {
      float milliseconds = 0;
      checkCuda(cudaEventElapsedTime(&milliseconds, state->events[rep], state->events[rep + 1]),
                "cudaEventElapsedTime");
      times.push_back(milliseconds * 1e-3);
    }
    return times;
  };
}
#endif

// Whether every rank has a GPU (a rank without one would leave the others waiting in NCCL).
bool everyRankHasGpu(Communicator& communicator, std::string* whyNot) {
#if IMERGE_HAVE_CUDA
  std::string whyNone;
  const int64_t localMissing = cudaDeviceCount(&whyNone) > 0 ? 0 : 1;
  int64_t anyMissing = localMissing;
  communicator.allreduceMax(&anyMissing, 1);
  if (anyMissing != 0) {
    *whyNot = localMissing ? whyNone : "another rank has no usable GPU";
    return false;
  }
  return true;
#else
  *whyNot = "this build has no CUDA (configure with -DIMERGE_CUDA=ON on a machine with nvcc)";
  return false;
#endif
}

std::string commandLine(int argc, char** argv) {
  std::string text;
  for (int i = 0; i < argc; ++i) text += (i ? " " : "") + std::string(argv[i]);
  return text;
}

int refit(const Options& options, const std::string& command) {
  BackendRun run{"refit", options.fitOnly, {}, readCommSamplesCsv(options.fitOnly), {}, 0};
  std::printf("refitting %zu samples from %s\n", run.samples.size(), options.fitOnly.c_str());
  nlohmann::json document = {{"tool", "imerge-commbench"},
                             {"command", command},
                             {"source", "refit of " + options.fitOnly},
                             {"backends", {runJson(run, options, true)}}};
  const std::string jsonPath = options.out + ".json";
  writeJson(jsonPath, std::move(document));
  std::printf("\nwrote %s\n", jsonPath.c_str());
  return 0;
}

int measure(Communicator& communicator, const Options& options, const std::string& command) {
  const bool isMain = communicator.rank() == 0;
  const std::string jsonPath = options.out + ".json";
  // A prefix that cannot be written fails now, not after the sweep (the error aborts every
  // rank).
  if (isMain) {
    IMERGE_CHECK(std::ofstream(jsonPath).is_open(), jsonPath, ": cannot open for writing (--out ",
                 options.out, ")");
  }
  std::vector<BackendRun> runs;
  if (options.backend != "device") {
    runs.push_back(sweep(communicator, communicator.backendName(),
                         hostCollectiveTimer(options.maxBytes, collectiveNamed(options.collective)),
                         options, options.out + ".csv"));
  }
  if (options.backend != "host") {
    std::string whyNot;
    if (!everyRankHasGpu(communicator, &whyNot)) {
      IMERGE_CHECK(options.backend != "device", "--backend device: no GPU to measure on (", whyNot,
                   "); use --backend host");
      if (isMain) std::printf("\nskipping the device (NCCL) sweep: %s\n", whyNot.c_str());
    } else {
#if IMERGE_HAVE_CUDA
      NcclCommunicator nccl(communicator, nullptr, NcclOptions{-1, options.timeoutSeconds});
      runs.push_back(
          sweep(communicator, nccl.backendName(),
                ncclCollectiveTimer(nccl, options.maxBytes, collectiveNamed(options.collective)),
                options, options.out + ".nccl.csv"));
      nccl.shutdown();
#endif
    }
  }
  if (!isMain) return 0;
  nlohmann::json backends = nlohmann::json::array();
  for (const BackendRun& run : runs) {
    writeMeasurementsCsv(run);
    backends.push_back(runJson(run, options, true));
  }
  writeJson(jsonPath, {{"tool", "imerge-commbench"},
                       {"command", command},
                       {"source", "measured"},
                       {"collective", options.collective},
                       {"ranks", communicator.size()},
                       {"repetitions", options.repetitions},
                       {"min_bytes", options.minBytes},
                       {"max_bytes", options.maxBytes},
                       {"backends", std::move(backends)}});
  std::printf("\nwrote");
  for (const BackendRun& run : runs) std::printf(" %s", run.csvPath.c_str());
  std::printf(" %s\n", jsonPath.c_str());
  return 0;
}

// The flags' own checks, with the flag named (CLI11 checks types and ranges).
void checkOptions(const Options& options) {
  IMERGE_CHECK(options.minBytes >= 4 && options.minBytes % 4 == 0, "--min-bytes ", options.minBytes,
               ": must be a positive multiple of 4 (float32 values)");
  IMERGE_CHECK(options.maxBytes % 4 == 0, "--max-bytes ", options.maxBytes,
               ": must be a multiple of 4 (float32 values)");
  IMERGE_CHECK(options.maxBytes >= options.minBytes, "--max-bytes ", options.maxBytes,
               " is below --min-bytes ", options.minBytes);
  IMERGE_CHECK(options.maxBytes <= (size_t{16} << 30), "--max-bytes ", options.maxBytes,
               ": at most 16 GiB (every rank allocates a buffer of this size)");
  IMERGE_CHECK(!options.out.empty(), "--out: the prefix must not be empty");
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  CLI::App app{"imerge-commbench: all-reduce time against message size, and both model fits"};
  app.add_option("--min-bytes", options.minBytes, "smallest message in bytes (multiple of 4)")
      ->capture_default_str();
  app.add_option("--max-bytes", options.maxBytes, "largest message in bytes (multiple of 4)")
      ->capture_default_str();
  app.add_option("--repetitions", options.repetitions,
                 "timed repetitions per size up to 1 MiB (fewer above, at least 3)")
      ->check(apps::wholeNumber(1))
      ->capture_default_str();
  app.add_option("--out", options.out, "output prefix: PREFIX.csv, PREFIX.nccl.csv, PREFIX.json")
      ->capture_default_str();
  app.add_option("--backend", options.backend,
                 "host (MPI, host buffers), device (NCCL, device buffers) or both (device only "
                 "where every rank has a GPU)")
      ->check(CLI::IsMember({"host", "device", "both"}))
      ->capture_default_str();
  app.add_option("--collective", options.collective,
                 "what to time: all-reduce, or one of its halves as imerge-overlap's split buckets "
                 "run them, reduce-scatter or all-gather of the whole message")
      ->check(CLI::IsMember({"all-reduce", "reduce-scatter", "all-gather"}))
      ->capture_default_str();
  app.add_option("--fit-only", options.fitOnly,
                 "refit this samples CSV (bytes,seconds[,workers]) without MPI and write "
                 "PREFIX.json")
      ->check(CLI::ExistingFile);
  app.add_option("--segments", options.segments,
                 "piecewise fit: most segments, the flat one included")
      ->check(apps::wholeNumber(2, 16))
      ->capture_default_str();
  app.add_flag("--beside-compute", options.besideCompute,
               "measure while --compute-threads busy threads per rank compute (contention; "
               "adds a compute_slowdown column)");
  app.add_option("--compute-threads", options.computeThreads,
                 "busy threads per rank for --beside-compute (default: OMP_NUM_THREADS, or 1)")
      ->check(apps::wholeNumber(1, 256));
  app.add_option("--timeout", options.timeoutSeconds,
                 "seconds an all-reduce may wait for the other ranks before the job stops")
      ->check(apps::finiteNumber(0))
      ->capture_default_str();
  if (const char* threads = std::getenv("OMP_NUM_THREADS"); threads && std::atoi(threads) > 0) {
    options.computeThreads = std::atoi(threads);
  }
  try {
    apps::refuseRepeatedOptions(app, argc, argv);
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    // Every rank parses the same arguments; one message is enough.
    const char* rank = std::getenv("OMPI_COMM_WORLD_RANK");
    if (rank != nullptr && std::string(rank) != "0") return error.get_exit_code();
    return app.exit(error);
  }
  const std::string command = commandLine(argc, argv);

  std::unique_ptr<Communicator> communicator;
  try {
    checkOptions(options);
    if (!options.fitOnly.empty()) return refit(options, command);
    IMERGE_CHECK(launchedByMpirun(),
                 "imerge-commbench measures all-reduces among ranks, and this process was not "
                 "started by mpirun. Launch it like this:\n  mpirun --allow-run-as-root "
                 "--oversubscribe --bind-to none -np 2 ",
                 argv[0], " ...\nor refit an existing CSV without MPI: --fit-only FILE.csv");
    communicator = startMpiCommunicator(MpiOptions{options.timeoutSeconds});
    if (communicator->rank() != 0) {
      IMERGE_CHECK(std::freopen("/dev/null", "w", stdout), "cannot silence rank ",
                   communicator->rank());
    }
    const int status = measure(*communicator, options, command);
    communicator->shutdown();
    return status;
  } catch (const std::exception& error) {
    std::cerr << "imerge-commbench: error";
    if (communicator)
      std::cerr << " on rank " << communicator->rank() << " of " << communicator->size();
    std::cerr << ": " << error.what() << "\n";
    if (communicator && communicator->size() > 1) communicator->abort(1);
    return 1;
  }
}
