// Comparing the parameters two trainings end with (data-parallel against one process, on the
// CPU or on GPUs): each tensor's values on the host, and how far two sets lie apart relative to
// each tensor's scale.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "layers/module.h"

namespace imerge::testing {

// Every parameter's values, registration order, copied to the host.
inline std::vector<std::vector<float>> parameterValues(layers::Module& model) {
  std::vector<std::vector<float>> values;
  for (const autograd::Variable& parameter : model.parameters()) {
    values.push_back(parameter.tensor().toVector());
  }
  return values;
}

// max |got - want| / max |want| over one tensor's elements: relative to the tensor's scale (its
// infinity norm), because summing gradients in another order changes the last bits, which an
// element-wise relative error would judge for elements near zero by their own tiny size.
inline double relativeDifference(const std::vector<float>& got, const std::vector<float>& want) {
  double largest = 0, difference = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    largest = std::max<double>(largest, std::fabs(want[i]));
    difference = std::max<double>(difference, std::fabs(got[i] - want[i]));
  }
  return difference / std::max(largest, 1e-30);
}

// The largest relativeDifference over corresponding tensors; `got` and `want` hold the same
// number of tensors (the caller asserts that first).
inline double largestRelativeDifference(const std::vector<std::vector<float>>& got,
                                        const std::vector<std::vector<float>>& want) {
  double worst = 0;
  for (size_t t = 0; t < want.size(); ++t)
    worst = std::max(worst, relativeDifference(got[t], want[t]));
  return worst;
}

}  // namespace imerge::testing
