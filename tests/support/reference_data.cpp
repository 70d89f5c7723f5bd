#include "support/reference_data.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

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
  const std::string path = std::string(IMERGE_REFERENCE_DIR) + "/" + file;
  std::ifstream in(path);
  IMERGE_CHECK(in.good(), "reference file ", path, " cannot be opened");
  nlohmann::json document = nlohmann::json::parse(in);
  IMERGE_CHECK(document.at("cases").contains(caseName), path, " has no case '", caseName, "'");
  return ReferenceCase(path, caseName, document.at("cases").at(caseName));
}

void expectAllClose(const Tensor& actual, const Tensor& expected, float rtol, float atol,
                    const std::string& what) {
  ASSERT_EQ(actual.shape(), expected.shape())
      << what << ": shape " << actual.describe() << " vs expected " << expected.describe();
  const float* a = actual.data<float>();
  const float* e = expected.data<float>();
  int64_t worst = -1;
  double worstExcess = 0;
  int64_t failures = 0;
  for (int64_t i = 0; i < actual.numel(); ++i) {
    const double error = std::fabs(static_cast<double>(a[i]) - e[i]);
    const double allowed = atol + rtol * std::fabs(e[i]);
    if (!(error <= allowed)) {  // also catches NaN
      ++failures;
      const double excess = std::isnan(error) ? INFINITY : error - allowed;
      if (worst < 0 || excess > worstExcess) {
        worst = i;
        worstExcess = excess;
      }
    }
  }
  EXPECT_EQ(failures, 0) << what << ": " << failures << " of " << actual.numel()
                         << " elements differ; worst at flat index " << worst << ": actual "
                         << (worst >= 0 ? a[worst] : 0) << ", expected "
                         << (worst >= 0 ? e[worst] : 0) << " (rtol " << rtol << ", atol " << atol
                         << ")";
}

}  // namespace imerge::testing
