// The parameters a training ends with (data-parallel against one process, on the CPU or on
// GPUs), copied to the host for support/compare.h's parametersCloseToScale.
#pragma once

#include <string>
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

// Every parameter's name, in the same order, for messages.
inline std::vector<std::string> parameterNames(layers::Module& model) {
  std::vector<std::string> names;
  for (const auto& [name, parameter] : model.namedParameters()) names.push_back(name);
  return names;
}

}  // namespace imerge::testing
