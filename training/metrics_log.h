// The JSON metrics log of a training run (--log-json FILE): the run's configuration once, then
// one record per epoch. The whole document is rewritten (to a temporary file, then renamed)
// after every epoch, so the file is valid JSON at every moment, even if the run dies.
//
//   {"run": {...configuration...}, "epochs": [{"epoch": 1, "train_loss": ..., ...}, ...]}
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace imerge::training {

class MetricsLog {
 public:
  // An empty path disables the log. `run` describes the configuration.
  MetricsLog(std::string path, nlohmann::json run);
  // A log resumed from a checkpoint keeps the epochs already recorded in the old file.
  void keepEpochsBefore(int64_t epoch);
  void addEpoch(nlohmann::json record);
  const nlohmann::json& document() const { return document_; }

 private:
  void write() const;

  std::string path_;
  nlohmann::json document_;
};

}  // namespace imerge::training
