// imerge-scale's table: one row per (model, workers, strategy, source, cluster scaling), written
// as PREFIX.csv and PREFIX.json, and printed as it is made.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace imerge::apps {

struct ScaleRow {
  std::string model;
  int workers = 0;
  std::string strategy;
  std::string belief;  // the belief source the strategy planned with (belief.h)
  std::string source;  // "measured", "simulated" or "published" (a preset's measured figures)
  double iterationSeconds = 0;
  double imagesPerSecond = 0;  // all workers together
  double communicationSeconds = 0;
  double speedup = 0;  // throughput over one worker's
  double scalingEfficiency = 0;
  double overlappedSeconds = 0;
  double waitingSeconds = 0;
  size_t buckets = 0;
  std::string clusterTruth = "";  // "as given", "ring-scaled from 8 workers", ...
  double startupScale = 1;
  double bandwidthScale = 1;
};

// Writes PREFIX.csv (the columns of ScaleRow, in its order) and PREFIX.json ({"config",
// "notes", "rows"}); an imerge::Error names the path that cannot be written.
void writeScaleTables(const std::string& prefix, const std::vector<ScaleRow>& rows,
                      const nlohmann::json& config, const std::vector<std::string>& notes);

// "[12/96] resnet18   8 workers mgwfbp simulated   49.80 ms/iter ..."
void printScaleRow(const ScaleRow& row, size_t done, size_t total);

}  // namespace imerge::apps
