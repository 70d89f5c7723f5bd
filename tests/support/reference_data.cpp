#include "support/reference_data.h"

#include <fstream>

#include "support/source_tree.h"

namespace imerge::testing {

ReferenceCase::ReferenceCase(std::string file, std::string caseName, nlohmann::json body)
    : file_(std::move(file)), caseName_(std::move(caseName)) {
  tensors_ = body.at("tensors");
  if (body.contains("options")) options_ = body.at("options");
}

Tensor ReferenceCase::tensor(const std::string& name) const {
  IMERGE_CHECK(tensors_.contains(name), file_, ": case '", caseName_, "' has no tensor '", name,
               "'");
  const auto& entry = tensors_.at(name);
  Shape shape = entry.at("shape").get<Shape>();
  if (entry.value("dtype", "float32") == "int64") {
    return Tensor::fromVector(entry.at("data").get<std::vector<int64_t>>(), shape);
  }
  return Tensor::fromVector(entry.at("data").get<std::vector<float>>(), shape);
}

ReferenceCase loadReferenceCase(const std::string& file, const std::string& caseName) {
  const std::string path = (referenceDir() / file).string();
  std::ifstream in(path);
  IMERGE_CHECK(in.good(), "reference file ", path, " cannot be opened");
  nlohmann::json document = nlohmann::json::parse(in);
  IMERGE_CHECK(document.at("cases").contains(caseName), path, " has no case '", caseName, "'");
  return ReferenceCase(path, caseName, document.at("cases").at(caseName));
}

}  // namespace imerge::testing
