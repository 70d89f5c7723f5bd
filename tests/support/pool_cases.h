// The pooling shapes and options the CUDA pooling kernels are checked on, both where their
// arithmetic is replayed on the host (tests/core/cuda_kernel_math_test.cpp) and where they run
// on a GPU (tests/cuda/pooling_lrn_dropout_test.cpp), so the two checks cover the same edge
// cases; each adds the models' shapes in its own sizes.
#pragma once

#include <string>
#include <vector>

#include "core/cpu/pooling.h"

namespace imerge::testing {

struct PoolCase {
  Shape input;
  cpu::Pool2dParams params;
};

// "[1, 2, 7, 9] k4x5 s1x2 p2x2", with " ceil" in ceil mode: the case in a failure message.
inline std::string describe(const PoolCase& c) {
  const auto& p = c.params;
  return shapeToString(c.input) + " k" + std::to_string(p.kernel[0]) + "x" +
         std::to_string(p.kernel[1]) + " s" + std::to_string(p.stride[0]) + "x" +
         std::to_string(p.stride[1]) + " p" + std::to_string(p.padding[0]) + "x" +
         std::to_string(p.padding[1]) +
         (p.symmetric() ? ""
                        : " e" + std::to_string(p.end()[0]) + "x" + std::to_string(p.end()[1])) +
         (p.ceilMode ? " ceil" : "");
}

// Small planes with odd and non-square sizes: stride > kernel, kernel > stride, padding, ceil
// mode with its extra window kept and dropped and past the real padding, a 1 x 1 plane, and
// padding that differs before and after the input.
inline std::vector<PoolCase> poolEdgeCases() {
  return {
      {{1, 2, 9, 7}, {{2, 2}, {3, 3}, {0, 0}, false}},  // stride > kernel: gaps
      {{1, 2, 10, 11}, {{2, 3}, {3, 4}, {1, 1}, false}},
      {{1, 2, 7, 9}, {{4, 5}, {1, 2}, {2, 2}, false}},  // kernel > stride, much overlap
      {{1, 1, 6, 6}, {{3, 3}, {2, 2}, {0, 0}, true}},   // ceil: extra window kept
      {{1, 1, 5, 5}, {{2, 2}, {2, 2}, {1, 1}, true}},   // ceil: last window dropped
      {{1, 2, 7, 10}, {{3, 2}, {1, 3}, {1, 0}, true}},
      {{2, 1, 8, 9}, {{3, 3}, {2, 2}, {1, 1}, true}},  // ceil past the real padding
      {{1, 1, 1, 1}, {{1, 1}, {1, 1}, {0, 0}, false}},
      // Asymmetric padding (ONNX's pads, oneDNN's padding_r): more after than before, less,
      // none before, and in ceil mode past the real end padding.
      {{1, 2, 7, 8}, {{3, 3}, {2, 2}, {0, 1}, false, {{1, 0}}}},
      {{1, 1, 6, 7}, {{2, 3}, {2, 2}, {1, 0}, false, {{0, 1}}}},
      {{2, 1, 7, 9}, {{3, 4}, {2, 3}, {1, 2}, true, {{0, 1}}}},
      {{1, 2, 5, 6}, {{4, 3}, {1, 2}, {0, 1}, true, {{2, 0}}}},
  };
}

}  // namespace imerge::testing
