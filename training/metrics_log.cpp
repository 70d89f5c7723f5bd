#include "training/metrics_log.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "core/error.h"

namespace imerge::training {

MetricsLog::MetricsLog(std::string path, nlohmann::json run) : path_(std::move(path)) {
  document_ = {{"run", std::move(run)}, {"epochs", nlohmann::json::array()}};
  if (path_.empty()) return;
  write();  // fail now, not after the first epoch, if the path cannot be written
}

void MetricsLog::keepEpochsBefore(int64_t epoch) {
  if (path_.empty()) return;
  std::ifstream in(path_);
  if (!in) return;
  nlohmann::json old = nlohmann::json::parse(in, nullptr, false);
  if (old.is_discarded() || !old.contains("epochs")) return;
  for (const auto& record : old["epochs"]) {
    if (record.value("epoch", int64_t{0}) <= epoch) document_["epochs"].push_back(record);
  }
  write();
}

void MetricsLog::addEpoch(nlohmann::json record) {
  document_["epochs"].push_back(std::move(record));
  if (!path_.empty()) write();
}

void MetricsLog::write() const {
  const std::string temporary = path_ + ".tmp";
  {
    std::ofstream out(temporary);
    IMERGE_CHECK(out.good(), "--log-json: cannot write ", temporary, ": ", std::strerror(errno));
    out << document_.dump(2) << "\n";
    IMERGE_CHECK(out.good(), "--log-json: writing ", temporary, " failed: ", std::strerror(errno));
  }
  IMERGE_CHECK(std::rename(temporary.c_str(), path_.c_str()) == 0, "--log-json: cannot rename ",
               temporary, " to ", path_, ": ", std::strerror(errno));
}

}  // namespace imerge::training
