// imerge-scale's table (contract in scale_table.h).
#include "apps/scale/scale_table.h"

#include <cstdio>
#include <fstream>

#include "core/error.h"

namespace imerge::apps {

void writeScaleTables(const std::string& prefix, const std::vector<ScaleRow>& rows,
                      const nlohmann::json& config, const std::vector<std::string>& notes) {
  const std::string csvPath = prefix + ".csv";
  std::ofstream csv(csvPath);
  IMERGE_CHECK(csv.is_open(), "--out: cannot write ", csvPath);
  csv << "model,workers,strategy,belief,source,seconds_per_iteration,images_per_second,"
         "communication_seconds,speedup,scaling_efficiency,overlapped_seconds,waiting_seconds,"
         "buckets,cluster_truth,startup_scale,bandwidth_scale\n";
  csv.precision(6);
  nlohmann::json jsonRows = nlohmann::json::array();
  for (const ScaleRow& row : rows) {
    csv << row.model << "," << row.workers << "," << row.strategy << "," << row.belief << ","
        << row.source << "," << row.iterationSeconds << "," << row.imagesPerSecond << ","
        << row.communicationSeconds << "," << row.speedup << "," << row.scalingEfficiency << ","
        << row.overlappedSeconds << "," << row.waitingSeconds << "," << row.buckets << ","
        << row.clusterTruth << "," << row.startupScale << "," << row.bandwidthScale << "\n";
    jsonRows.push_back({{"model", row.model},
                        {"workers", row.workers},
                        {"strategy", row.strategy},
                        {"belief", row.belief},
                        {"source", row.source},
                        {"seconds_per_iteration", row.iterationSeconds},
                        {"images_per_second", row.imagesPerSecond},
                        {"communication_seconds", row.communicationSeconds},
                        {"speedup", row.speedup},
                        {"scaling_efficiency", row.scalingEfficiency},
                        {"overlapped_seconds", row.overlappedSeconds},
                        {"waiting_seconds", row.waitingSeconds},
                        {"buckets", row.buckets},
                        {"cluster_truth", row.clusterTruth},
                        {"startup_scale", row.startupScale},
                        {"bandwidth_scale", row.bandwidthScale}});
  }
  IMERGE_CHECK(csv.good(), "--out: writing ", csvPath, " failed");
  const std::string jsonPath = prefix + ".json";
  std::ofstream json(jsonPath);
  IMERGE_CHECK(json.is_open(), "--out: cannot write ", jsonPath);
  json << nlohmann::json{{"config", config}, {"notes", notes}, {"rows", std::move(jsonRows)}}.dump(
              1)
       << "\n";
  IMERGE_CHECK(json.good(), "--out: writing ", jsonPath, " failed");
}

void printScaleRow(const ScaleRow& row, size_t done, size_t total) {
  // A publication gives throughput only: its communication time is not known, so not shown.
  char communication[32] = "comm        -   ";
  if (row.source != "published") {
    std::snprintf(communication, sizeof communication, "comm %8.2f ms",
                  1e3 * row.communicationSeconds);
  }
  std::printf(
      "[%zu/%zu] %-9s %3d workers %-8s %-9s %9.2f ms/iter %9.1f img/s  %s  "
      "speedup %6.2f (%3.0f%%)",
      done, total, row.model.c_str(), row.workers, row.strategy.c_str(), row.source.c_str(),
      1e3 * row.iterationSeconds, row.imagesPerSecond, communication, row.speedup,
      100 * row.scalingEfficiency);
  if (row.startupScale != 1 || row.bandwidthScale != 1) {
    std::printf("  [startup x%g, bandwidth x%g]", row.startupScale, row.bandwidthScale);
  }
  std::printf("\n");
  std::fflush(stdout);
}

}  // namespace imerge::apps
