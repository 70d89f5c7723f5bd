// How much of the data loading the DataLoader's prefetch hides behind the training step.
//
// Writes a synthetic image folder of 224x224 JPEGs (smooth colour fields plus noise, so they
// compress like photographs rather than like flat colour) into a temporary directory, then
// reads epochs through an ImageFolderDataset (flip + normalise) with 0, 1, 2, ... workers while
// the consumer simulates a training step of --compute-ms per batch. It reports the loading time
// per batch with no prefetch and the consumer's wait per batch with it: the wait is the part of
// loading that training does not hide. docs/data_loading.md holds the command and figures.
//
//   imerge-data-bench [--images 512] [--batch 32] [--compute-ms 0] [--workers 0,1,2,4] [--busy]
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "data/data_loader.h"
#include "data/image_folder.h"

#define STB_IMAGE_WRITE_IMPLEMENTATION
#if __has_include(<stb/stb_image_write.h>)
#include <stb/stb_image_write.h>
#else
#include <stb_image_write.h>
#endif

namespace fs = std::filesystem;
using namespace imerge;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kSide = 224;
constexpr int kClasses = 4;

void writeFolder(const fs::path& root, int images) {
  std::mt19937 random(1234);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  std::normal_distribution<float> noise(0.0f, 12.0f);
  std::vector<unsigned char> pixels(kSide * kSide * 3);
  for (int i = 0; i < images; ++i) {
    const fs::path folder = root / ("class" + std::to_string(i % kClasses));
    fs::create_directories(folder);
    float base[3], slopeX[3], slopeY[3], wave[3];
    for (int c = 0; c < 3; ++c) {
      base[c] = 40 + 150 * unit(random);
      slopeX[c] = 60 * (unit(random) - 0.5f);
      slopeY[c] = 60 * (unit(random) - 0.5f);
      wave[c] = 0.02f + 0.1f * unit(random);
    }
    for (int y = 0; y < kSide; ++y) {
      for (int x = 0; x < kSide; ++x) {
        for (int c = 0; c < 3; ++c) {
          const float value = base[c] + slopeX[c] * x / kSide + slopeY[c] * y / kSide +
                              30 * std::sin(wave[c] * (x + 2 * y)) + noise(random);
          pixels[(y * kSide + x) * 3 + c] =
              static_cast<unsigned char>(std::clamp(value, 0.0f, 255.0f));
        }
      }
    }
    const std::string path = (folder / ("img" + std::to_string(i) + ".jpg")).string();
    if (!stbi_write_jpg(path.c_str(), kSide, kSide, 3, pixels.data(), 90)) {
      throw std::runtime_error("cannot write " + path);
    }
  }
}

void simulateCompute(double milliseconds, bool busy) {
  if (milliseconds <= 0) return;
  if (!busy) {
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(milliseconds));
    return;
  }
  // A spinning step occupies a core as a real CPU training step would.
  const auto end = Clock::now() + std::chrono::duration<double, std::milli>(milliseconds);
  volatile double sink = 0;
  while (Clock::now() < end) sink = sink + 1.0;
}

struct Run {
  double epochSeconds = 0;
  double waitPerBatchMs = 0;        // all batches
  double firstWaitMs = 0;           // the pipeline filling
  double steadyWaitPerBatchMs = 0;  // batches after the first
  int64_t batches = 0;
};

Run runEpoch(const std::shared_ptr<const data::Dataset>& dataset, int workers, int batch,
             double computeMs, bool busy, int64_t epoch) {
  data::DataLoaderOptions options;
  options.batchSize = batch;
  options.workers = workers;
  options.prefetchBatches = std::max(4, 2 * workers);
  options.seed = 1;
  data::DataLoader loader(dataset, options);
  loader.startEpoch(epoch);
  data::Batch batches;
  Run run;
  double previousWait = 0;
  const auto start = Clock::now();
  while (loader.next(batches)) {
    const double wait = loader.waitSeconds();
    if (run.batches == 0) run.firstWaitMs = 1e3 * (wait - previousWait);
    previousWait = wait;
    ++run.batches;
    simulateCompute(computeMs, busy);
  }
  run.epochSeconds = std::chrono::duration<double>(Clock::now() - start).count();
  run.waitPerBatchMs = 1e3 * loader.waitSeconds() / static_cast<double>(run.batches);
  run.steadyWaitPerBatchMs =
      run.batches > 1 ? (1e3 * loader.waitSeconds() - run.firstWaitMs) / (run.batches - 1) : 0;
  return run;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"DataLoader prefetch benchmark on a synthetic 224x224 JPEG folder"};
  int images = 512;
  int batch = 32;
  double computeMs = 0;
  std::vector<int> workerCounts = {0, 1, 2, 4};
  bool busy = false;
  std::string directory;
  app.add_option("--images", images, "JPEGs to write")->check(CLI::PositiveNumber);
  app.add_option("--batch", batch, "batch size")->check(CLI::PositiveNumber);
  app.add_option("--compute-ms", computeMs,
                 "simulated training step per batch; 0: 1.5 x the measured loading time");
  app.add_option("--workers", workerCounts, "worker counts to compare")->delimiter(',');
  app.add_flag("--busy", busy, "spin during the simulated step instead of sleeping");
  app.add_option("--dir", directory, "where to write the folder (default: a temporary one)");
  CLI11_PARSE(app, argc, argv);

  const bool temporary = directory.empty();
  const fs::path root =
      temporary ? fs::temp_directory_path() / ("imerge-data-bench-" + std::to_string(::getpid()))
                : fs::path(directory);
  try {
    auto start = Clock::now();
    writeFolder(root, images);
    std::printf("wrote %d JPEGs of %dx%d to %s in %.1f s (%.1f KiB each)\n", images, kSide, kSide,
                root.c_str(), std::chrono::duration<double>(Clock::now() - start).count(), [&] {
                  double bytes = 0;
                  for (const auto& entry : fs::recursive_directory_iterator(root)) {
                    if (entry.is_regular_file()) bytes += static_cast<double>(entry.file_size());
                  }
                  return bytes / images / 1024;
                }());

    data::ImageFolderOptions folderOptions;
    folderOptions.transform =
        data::compose({data::randomHorizontalFlip(),
                       data::normalize({0.485f, 0.456f, 0.406f}, {0.229f, 0.224f, 0.225f})});
    auto dataset = std::make_shared<const data::ImageFolderDataset>(root.string(), folderOptions);

    // Warm the page cache, then measure loading alone: workers = 0 and no step.
    runEpoch(dataset, 0, batch, 0, false, 0);
    const Run loading = runEpoch(dataset, 0, batch, 0, false, 1);
    if (computeMs <= 0) computeMs = std::round(1.5 * loading.waitPerBatchMs);
    std::printf("loading alone (workers 0, no step): %.1f ms per batch of %d (%.0f images/s)\n",
                loading.waitPerBatchMs, batch, 1e3 * batch / loading.waitPerBatchMs);
    std::printf("simulated step: %.0f ms per batch (%s), %u hardware threads\n\n", computeMs,
                busy ? "spinning" : "sleeping", std::thread::hardware_concurrency());
    std::printf("%8s %10s %14s %16s %18s %12s\n", "workers", "batches", "epoch s", "wait ms/batch",
                "steady wait ms/b", "hidden %");
    for (int workers : workerCounts) {
      const Run run = runEpoch(dataset, workers, batch, computeMs, busy, 2);
      const double hidden =
          100.0 * std::max(0.0, 1.0 - run.waitPerBatchMs / loading.waitPerBatchMs);
      std::printf("%8d %10lld %14.2f %16.1f %18.1f %12.0f\n", workers,
                  static_cast<long long>(run.batches), run.epochSeconds, run.waitPerBatchMs,
                  run.steadyWaitPerBatchMs, hidden);
    }
  } catch (const std::exception& error) {
    std::cerr << "imerge-data-bench: " << error.what() << '\n';
    if (temporary) fs::remove_all(root);
    return 1;
  }
  if (temporary) fs::remove_all(root);
  return 0;
}
