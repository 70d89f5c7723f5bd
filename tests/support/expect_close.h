// Values a CUDA kernel computed, or its arithmetic replayed on the host (tests/core/*_math_test),
// against the CPU kernel's result on the same inputs: |actual - expected| <= tolerance *
// max(1, |expected|) elementwise, the first offender reported with `what`. The tensors' form,
// for results on a GPU, is in support/gpu_test.h.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace imerge::testing {

inline void expectClose(const std::vector<float>& actual, const Tensor& expected,
                        const std::string& what = "", float tolerance = 1e-4f) {
  const std::vector<float> reference = expected.toVector();
  ASSERT_EQ(actual.size(), reference.size()) << what;
  for (size_t i = 0; i < actual.size(); ++i) {
    const float bound = tolerance * std::max(1.0f, std::fabs(reference[i]));
    ASSERT_LE(std::fabs(actual[i] - reference[i]), bound)
        << what << ": element " << i << " of " << expected.describe() << " is " << actual[i]
        << ", the CPU's " << reference[i];
  }
}

}  // namespace imerge::testing
