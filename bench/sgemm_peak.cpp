// imerge-sgemm-peak: what sgemm reaches on this machine, the ceiling a CPU training step is
// measured against (bench/compare_with_pytorch.sh --models prints each step's fraction of the
// faster one). Times oneDNN's sgemm, which imerge's kernels use (core/cpu/gemm.h), and
// OpenBLAS', which reads this CPU's features by its own table and may pick slower kernels.
// Square float32 products C = A B of --size (2048 by default: large enough that packing and
// threading overheads are small), on --threads OpenMP threads, the best of --repeats after one
// warm-up, one JSON line per library.
#include <cblas.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <vector>

#include "bench/best_time.h"
#include "core/cpu/gemm.h"
#include "core/device.h"

extern "C" void openblas_set_num_threads(int);

int main(int argc, char** argv) {
  int size = 2048;
  int threads = 2;
  int repeats = 5;
  CLI::App app{"imerge-sgemm-peak: oneDNN and OpenBLAS sgemm GFLOP/s"};
  app.add_option("--size", size, "rows = columns = inner size")
      ->check(CLI::Range(64, 16384))
      ->capture_default_str();
  app.add_option("--threads", threads)->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--repeats", repeats)->check(CLI::PositiveNumber)->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  imerge::setNumThreads(threads);
  openblas_set_num_threads(threads);  // the OpenMP build shares libgomp's threads
  const size_t elements = static_cast<size_t>(size) * size;
  std::vector<float> a(elements, 0.5f), b(elements, 0.25f), c(elements);
  const double gflop = 2.0 * size * static_cast<double>(size) * size / 1e9;
  const auto report = [&](const char* library, double seconds) {
    std::printf(
        "{\"library\": \"%s\", \"size\": %d, \"threads\": %d, \"repeats\": %d, "
        "\"best_ms\": %.3f, \"gflops\": %.1f}\n",
        library, size, threads, repeats, seconds * 1000, gflop / seconds);
  };
  report("onednn", imerge::bench::bestSeconds(repeats, [&] {
           imerge::cpu::sgemm(imerge::Transpose::No, imerge::Transpose::No, size, size, size, 1.0f,
                              a.data(), size, b.data(), size, 0.0f, c.data(), size);
         }));
  report("openblas", imerge::bench::bestSeconds(repeats, [&] {
           cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, size, size, size, 1.0f, a.data(),
                       size, b.data(), size, 0.0f, c.data(), size);
         }));
  return 0;
}
