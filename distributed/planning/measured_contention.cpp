// Contention read from imerge-commbench --beside-compute (contract in measured_contention.h).
#include "distributed/planning/measured_contention.h"

#include <algorithm>
#include <vector>

#include "core/error.h"
#include "distributed/planning/cluster_catalog.h"
#include "distributed/planning/csv_fields.h"

namespace imerge::distributed {

MeasuredContention MeasuredContention::load(const std::string& path, const std::string& flag) {
  const std::string source = flag + " " + path;
  std::ifstream file = openTableFile(path, "contention samples CSV (" + flag + ")");
  const CsvTable table(file, path, {"bytes", "workers", "seconds"}, "samples");
  IMERGE_CHECK(table.has("compute_slowdown"), source,
               ": no 'compute_slowdown' column; measure contention with imerge-commbench "
               "--beside-compute");
  std::map<int, std::vector<double>> slowdowns;
  for (const CsvTable::Row& row : table.rows()) {
    const int workers = static_cast<int>(table.wholeNumber(row, "workers", 1));
    if (workers >= 2) slowdowns[workers].push_back(table.number(row, "compute_slowdown"));
  }
  MeasuredContention contention;
  // The samples are readCommSamplesCsv's; read again to reuse its field rules.
  contention.besideCompute_ =
      std::make_shared<ClusterProfile>(fitMeasuredCluster(source, readCommSamplesCsv(path)));
  for (auto& [workers, values] : slowdowns) {
    std::sort(values.begin(), values.end());
    const double median = values[values.size() / 2];
    // Each row's rate is measured over a short window, so single rows scatter below 1 on a
    // busy machine (0.89 seen in CI); only the median, the figure used, has to be believable.
    IMERGE_CHECK(median >= 0.9, source, ": the median compute_slowdown at ", workers,
                 " workers is ", median,
                 ", so compute ran faster beside an all-reduce than alone; measure again on an "
                 "otherwise idle machine");
    contention.computeSlowdown_[workers] = std::max(1.0, median);
  }
  return contention;
}

double MeasuredContention::computeSlowdownAt(int workers) const {
  // The count the cost is ring-scaled from.
  return computeSlowdown_.at(besideCompute_->nearestMeasuredWorkers(workers));
}

Contention MeasuredContention::at(int workers, bool profileSlowedDown) const {
  return {.besideCompute = besideCompute_.get(),
          .computeSlowdown = profileSlowedDown ? 1.0 : computeSlowdownAt(workers)};
}

}  // namespace imerge::distributed
