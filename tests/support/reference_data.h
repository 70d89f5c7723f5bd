// Reference values computed by PyTorch (Debian's python3-torch) with the committed scripts in
// tests/reference/*.py, stored as small JSON files beside them:
//
//   {"cases": {"<case>": {"tensors": {"<name>": {"shape": [..], "data": [..]}, ...},
//                         "options": {...}}}}
//
// Integer tensors (labels) carry "dtype": "int64". Comparisons with them: support/compare.h.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "core/tensor.h"

namespace imerge::testing {

class ReferenceCase {
 public:
  ReferenceCase(std::string file, std::string caseName, nlohmann::json body);
  Tensor tensor(const std::string& name) const;
  const nlohmann::json& options() const { return options_; }
  const std::string& name() const { return caseName_; }

 private:
  std::string file_;
  std::string caseName_;
  nlohmann::json tensors_;
  nlohmann::json options_;
};

// `file` is relative to tests/reference/.
ReferenceCase loadReferenceCase(const std::string& file, const std::string& caseName);

}  // namespace imerge::testing
