// imerge-allreduce-bench: the cost of imerge's communication path over plain MPI.
//
// For each total size, the same bytes are all-reduced (float sum, in place) two ways, alternated
// round by round:
//   raw MPI   blocking MPI_Allreduce calls, one per bucket, issued back to back by a single
//             task on the communication thread (MPI is FUNNELED to that thread, so this is the
//             only place raw MPI may run); timed inside the task, so it is MPI alone.
//   imerge    one allreduceSumAsync per bucket from the main thread, then wait for them all
//             (in order, or the last first with --wait last); timed on the main thread, so it
//             includes the queue, the thread hand-off, the waiter's wake-ups and the
//             MPI_Iallreduce + MPI_Test/yield loop.
// Bucket layouts: one bucket; ResNet-18's 62 gradient tensors (their sizes scaled to the total)
// fused in backward order into buckets of about --bucket-mib (DDP's 25 MiB); and those 62
// tensors one all-reduce each. Each sample starts after a barrier and counts the slowest rank;
// the figures are medians over --rounds of the time per pass (small sizes make many passes per
// sample). GB/s is algorithm bandwidth: total bytes / time. A third variant, "unchecked", is the
// imerge path without the collective shape check (MpiOptions::checkCollectiveShapes), so the
// check's cost per pass is "imerge ms" less "unchecked ms", measured in the same rounds.
//
//   mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2
//       build/release/bench/imerge-allreduce-bench --json allreduce.json
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "distributed/comm/mpi_communicator.h"

namespace {

using namespace imerge::distributed;
using Clock = std::chrono::steady_clock;

// ResNet-18's parameter tensors in forward order, in elements (torchvision, 1000 classes):
// conv1, bn1, then per basic block conv/bn/conv/bn (+ downsample conv/bn), then fc.
std::vector<size_t> resnet18TensorElements() {
  std::vector<size_t> elements{64 * 3 * 7 * 7, 64, 64};
  size_t inChannels = 64;
  for (size_t channels : {64, 128, 256, 512}) {
    for (int block = 0; block < 2; ++block) {
      const size_t blockIn = block == 0 ? inChannels : channels;
      for (size_t e : {channels * blockIn * 9, channels, channels, channels * channels * 9,
                       channels, channels}) {
        elements.push_back(e);
      }
      if (block == 0 && channels != 64) {
        for (size_t e : {channels * inChannels, channels, channels}) elements.push_back(e);
      }
    }
    inChannels = channels;
  }
  elements.push_back(512 * 1000);
  elements.push_back(1000);
  return elements;  // 62 tensors, 11,689,512 elements
}

// Bucket sizes in bytes (multiples of 4) for `layout`, summing to totalBytes.
std::vector<size_t> bucketBytes(const std::string& layout, size_t totalBytes, size_t bucketCap) {
  if (layout == "single") return {totalBytes};
  std::vector<size_t> elements = resnet18TensorElements();
  std::reverse(elements.begin(), elements.end());  // backward produces fc first
  const double totalElements = std::accumulate(elements.begin(), elements.end(), 0.0);
  const size_t totalFloats = totalBytes / 4;
  if (totalFloats < elements.size()) {
    throw std::runtime_error(layout + " needs at least " + std::to_string(4 * elements.size()) +
                             " bytes, one float per tensor");
  }
  // One float each, the rest in proportion to ResNet-18's sizes; rounding leftovers go to the
  // largest tensor, so the total is exact.
  const size_t spare = totalFloats - elements.size();
  std::vector<size_t> floats(elements.size());
  size_t assigned = 0;
  for (size_t i = 0; i < elements.size(); ++i) {
    floats[i] = 1 + static_cast<size_t>(spare * (elements[i] / totalElements));
    assigned += floats[i];
  }
  floats[std::max_element(elements.begin(), elements.end()) - elements.begin()] +=
      totalFloats - assigned;
  std::vector<size_t> tensors;
  for (size_t count : floats) tensors.push_back(count * 4);
  if (layout == "resnet18-per-tensor") return tensors;
  std::vector<size_t> buckets;
  size_t open = 0;
  for (size_t bytes : tensors) {
    open += bytes;
    if (open >= bucketCap) {
      buckets.push_back(open);
      open = 0;
    }
  }
  if (open > 0) buckets.push_back(open);
  return buckets;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

// The slowest rank's time of one sample.
double slowestSeconds(Communicator& comm, double seconds) {
  int64_t nanoseconds = static_cast<int64_t>(seconds * 1e9);
  comm.allreduceMax(&nanoseconds, 1);
  return nanoseconds * 1e-9;
}

// Seconds per pass over `buckets`; a sample makes `passes` passes so that small sizes are
// timed over many all-reduces rather than one.
double timeRaw(Communicator& comm, float* data, const std::vector<size_t>& buckets, int passes) {
  comm.barrier();
  double seconds = 0;
  comm.submit("raw MPI_Allreduce",
              [&](CollectiveOps&) {
                const auto start = Clock::now();
                for (int pass = 0; pass < passes; ++pass) {
                  size_t offset = 0;
                  for (size_t bytes : buckets) {
                    const int code =
                        MPI_Allreduce(MPI_IN_PLACE, data + offset / 4, static_cast<int>(bytes / 4),
                                      MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
                    if (code != MPI_SUCCESS) throw std::runtime_error("MPI_Allreduce failed");
                    offset += bytes;
                  }
                }
                seconds = std::chrono::duration<double>(Clock::now() - start).count();
              })
      ->wait();
  return slowestSeconds(comm, seconds) / passes;
}

double timeCommunicator(Communicator& comm, float* data, const std::vector<size_t>& buckets,
                        int passes, bool waitLastFirst) {
  comm.barrier();
  std::vector<WorkHandle> works;
  works.reserve(buckets.size() * passes);
  const auto start = Clock::now();
  for (int pass = 0; pass < passes; ++pass) {
    size_t offset = 0;
    for (size_t bytes : buckets) {
      works.push_back(comm.allreduceSumAsync(data + offset / 4, bytes / 4, "bucket"));
      offset += bytes;
    }
  }
  // FIFO: once the last has completed, so have all the others, and the waits below return at
  // once instead of sleeping and waking once per work.
  if (waitLastFirst) works.back()->wait();
  for (auto& work : works) work->wait();
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return slowestSeconds(comm, seconds) / passes;
}

std::string readableBytes(size_t bytes) {
  char text[32];
  if (bytes >= (size_t{1} << 20)) {
    std::snprintf(text, sizeof text, "%g MiB", bytes / 1048576.0);
  } else {
    std::snprintf(text, sizeof text, "%g KiB", bytes / 1024.0);
  }
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<double> sizesMib{1, 4, 16, 64, 256};
  std::vector<std::string> layouts{"single", "resnet18-fused", "resnet18-per-tensor"};
  double bucketMib = 25;
  int rounds = 7;
  int warmup = 1;
  std::string jsonPath;
  std::string waitOrder = "each";
  CLI::App app{"imerge-allreduce-bench: imerge's Communicator against raw MPI_Allreduce"};
  app.add_option("--sizes-mib", sizesMib, "total sizes in MiB")->delimiter(',');
  app.add_option("--layouts", layouts, "single, resnet18-fused, resnet18-per-tensor")
      ->delimiter(',')
      ->check(CLI::IsMember({"single", "resnet18-fused", "resnet18-per-tensor"}));
  app.add_option("--bucket-mib", bucketMib, "bucket cap of resnet18-fused")
      ->check(CLI::PositiveNumber);
  app.add_option("--rounds", rounds, "measured rounds per case (median)")
      ->check(CLI::PositiveNumber);
  app.add_option("--warmup", warmup, "unmeasured rounds per case")->check(CLI::NonNegativeNumber);
  app.add_option("--wait", waitOrder,
                 "each: wait for every work in order (like a reducer); last: wait for the last "
                 "first (FIFO), which saves a sleep and wake-up per work")
      ->check(CLI::IsMember({"each", "last"}));
  app.add_option("--json", jsonPath, "also write the results as JSON to this file");
  CLI11_PARSE(app, argc, argv);
  const bool waitLastFirst = waitOrder == "last";

  if (!launchedByMpirun()) {
    std::fprintf(stderr,
                 "imerge-allreduce-bench compares all-reduces between ranks; start it with "
                 "mpirun, e.g.\n  mpirun --allow-run-as-root --oversubscribe --bind-to none "
                 "-np 2 %s\n",
                 argv[0]);
    return 2;
  }
  try {  // every rank checks the same arguments, so every rank exits here alike
    for (double mib : sizesMib) {
      for (const std::string& layout : layouts) {
        bucketBytes(layout, static_cast<size_t>(mib * 1048576.0) / 4 * 4,
                    static_cast<size_t>(bucketMib * 1048576.0));
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "imerge-allreduce-bench: %s; raise --sizes-mib\n", e.what());
    return 2;
  }
  MpiCommunicator comm;
  const bool print = comm.rank() == 0;
  if (print) {
    std::printf(
        "imerge-allreduce-bench: %d ranks, %d rounds (median), float sum in place, "
        "--wait %s\n",
        comm.size(), rounds, waitOrder.c_str());
    std::printf("%-10s %-20s %8s %12s %12s %12s %12s %7s %14s %12s\n", "total", "layout", "buckets",
                "raw ms", "imerge ms", "raw GB/s", "imerge GB/s", "ratio", "unchecked ms",
                "check us");
  }
  nlohmann::json results = nlohmann::json::array();
  const size_t maxBytes =
      static_cast<size_t>(*std::max_element(sizesMib.begin(), sizesMib.end()) * 1048576.0) / 4 * 4;
  std::vector<float> buffer(maxBytes / 4, 0.0f);  // zeros stay zeros: no overflow over rounds
  for (double mib : sizesMib) {
    const size_t totalBytes = static_cast<size_t>(mib * 1048576.0) / 4 * 4;
    for (const std::string& layout : layouts) {
      const auto buckets =
          bucketBytes(layout, totalBytes, static_cast<size_t>(bucketMib * 1048576.0));
      // At least 8 MiB per sample (at most 1000 passes).
      const int passes = static_cast<int>(
          std::clamp<size_t>((size_t{8} << 20) / std::max<size_t>(totalBytes, 1), 1, 1000));
      std::vector<double> raw, ours, unchecked;
      const auto timeUnchecked = [&] {
        // Every rank switches at the same point of its sequence of collectives.
        comm.setCheckCollectiveShapes(false);
        const double seconds =
            timeCommunicator(comm, buffer.data(), buckets, passes, waitLastFirst);
        comm.setCheckCollectiveShapes(true);
        return seconds;
      };
      for (int round = -warmup; round < rounds; ++round) {
        // Alternate which goes first, so neither always inherits the other's cache state.
        double rawSeconds, oursSeconds, uncheckedSeconds;
        if (round % 2 == 0) {
          rawSeconds = timeRaw(comm, buffer.data(), buckets, passes);
          oursSeconds = timeCommunicator(comm, buffer.data(), buckets, passes, waitLastFirst);
          uncheckedSeconds = timeUnchecked();
        } else {
          uncheckedSeconds = timeUnchecked();
          oursSeconds = timeCommunicator(comm, buffer.data(), buckets, passes, waitLastFirst);
          rawSeconds = timeRaw(comm, buffer.data(), buckets, passes);
        }
        if (round >= 0) {
          raw.push_back(rawSeconds);
          ours.push_back(oursSeconds);
          unchecked.push_back(uncheckedSeconds);
        }
      }
      const double rawMedian = median(raw), oursMedian = median(ours);
      const double uncheckedMedian = median(unchecked);
      const double rawGbps = totalBytes / rawMedian / 1e9, oursGbps = totalBytes / oursMedian / 1e9;
      if (print) {
        std::printf("%-10s %-20s %8zu %12.3f %12.3f %12.3f %12.3f %6.1f%% %14.3f %12.1f\n",
                    readableBytes(totalBytes).c_str(), layout.c_str(), buckets.size(),
                    rawMedian * 1e3, oursMedian * 1e3, rawGbps, oursGbps,
                    100.0 * oursGbps / rawGbps, uncheckedMedian * 1e3,
                    (oursMedian - uncheckedMedian) * 1e6);
        std::fflush(stdout);
      }
      results.push_back({{"total_bytes", totalBytes},
                         {"layout", layout},
                         {"buckets", buckets.size()},
                         {"passes_per_sample", passes},
                         {"raw_seconds", raw},
                         {"imerge_seconds", ours},
                         {"raw_median_seconds", rawMedian},
                         {"imerge_median_seconds", oursMedian},
                         {"unchecked_seconds", unchecked},
                         {"unchecked_median_seconds", uncheckedMedian},
                         {"raw_gbps", rawGbps},
                         {"imerge_gbps", oursGbps},
                         {"ratio", oursGbps / rawGbps}});
    }
  }
  if (print && !jsonPath.empty()) {
    std::ofstream out(jsonPath);
    out << nlohmann::json{{"ranks", comm.size()},
                          {"rounds", rounds},
                          {"wait", waitOrder},
                          {"results", results}}
               .dump(2)
        << "\n";
    if (!out) std::fprintf(stderr, "could not write %s\n", jsonPath.c_str());
  }
  comm.shutdown();
  return 0;
}
