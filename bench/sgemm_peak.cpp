// imerge-sgemm-peak: what OpenBLAS's sgemm reaches on this machine, the ceiling a CPU training
// step is measured against (bench/compare_with_pytorch.sh --models prints each step's fraction
// of it). Square float32 products C = A B of --size (2048 by default: large enough that packing
// and threading overheads are small), on --threads OpenMP threads, the best of --repeats after
// one warm-up, as one JSON line.
#include <cblas.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "core/device.h"

int main(int argc, char** argv) {
  int size = 2048;
  int threads = 2;
  int repeats = 5;
  CLI::App app{"imerge-sgemm-peak: OpenBLAS sgemm GFLOP/s"};
  app.add_option("--size", size, "rows = columns = inner size")
      ->check(CLI::Range(64, 16384))
      ->capture_default_str();
  app.add_option("--threads", threads)->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--repeats", repeats)->check(CLI::PositiveNumber)->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  imerge::setNumThreads(threads);  // the OpenMP build of OpenBLAS shares these threads
  const size_t elements = static_cast<size_t>(size) * size;
  std::vector<float> a(elements, 0.5f), b(elements, 0.25f), c(elements);
  double bestSeconds = 1e30;
  for (int i = 0; i <= repeats; ++i) {  // i == 0 is the warm-up
    const auto start = std::chrono::steady_clock::now();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, size, size, size, 1.0f, a.data(), size,
                b.data(), size, 0.0f, c.data(), size);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (i > 0) bestSeconds = std::min(bestSeconds, seconds);
  }
  const double gflop = 2.0 * size * static_cast<double>(size) * size / 1e9;
  std::printf(
      "{\"size\": %d, \"threads\": %d, \"repeats\": %d, \"best_ms\": %.3f, "
      "\"gflops\": %.1f}\n",
      size, threads, repeats, bestSeconds * 1000, gflop / bestSeconds);
  return 0;
}
