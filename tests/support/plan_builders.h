// Parameters and plans for testing the Reducer (tests/distributed/runtime/reducer_test.cpp on the
// CPU, reducer_device_test.cpp on a fake GPU): named parameters of given sizes, the backward order
// of registration-ordered parameters, and a plan of whole tensors in consecutive groups.
#pragma once

#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "autograd/variable.h"
#include "distributed/planning/plan.h"

namespace imerge::testing {

// Zero parameters p0, p1, ... of `sizes` elements on `device`, requiring gradients, in
// registration order (backward order is the reverse).
inline std::vector<autograd::Variable> makeParameters(const std::vector<int64_t>& sizes,
                                                      Device& device = cpuDevice()) {
  std::vector<autograd::Variable> parameters;
  for (size_t i = 0; i < sizes.size(); ++i) {
    autograd::Variable parameter(Tensor::zeros({sizes[i]}, DType::Float32, device), true);
    std::string name = "p";  // appended, not "p" + ...: GCC 12 warns falsely on the sum
    name += std::to_string(i);
    parameter.setName(name);
    parameters.push_back(parameter);
  }
  return parameters;
}

// count - 1, ..., 1, 0.
inline std::vector<size_t> reversed(size_t count) {
  std::vector<size_t> order(count);
  std::iota(order.rbegin(), order.rend(), 0);
  return order;
}

// Buckets of whole tensors, `groups[b]` consecutive positions of `order` (backward order, as
// indices into `parameters`) for bucket b, with priorities in bucket order.
inline distributed::Plan fifoPlan(const std::vector<autograd::Variable>& parameters,
                                  const std::vector<size_t>& order,
                                  const std::vector<size_t>& groups) {
  distributed::Plan plan;
  size_t position = 0;
  for (size_t group : groups) {
    distributed::Bucket bucket;
    for (size_t i = 0; i < group; ++i, ++position) {
      bucket.tensors.push_back(position);
      bucket.bytes += parameters[order[position]].tensor().bytes();
    }
    bucket.priority = static_cast<int>(plan.buckets.size());
    plan.buckets.push_back(bucket);
  }
  return plan;
}

}  // namespace imerge::testing
