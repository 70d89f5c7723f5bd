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
    const double slowdown = table.number(row, "compute_slowdown");
    // The busy threads' rate is measured over short windows; a little below 1 is noise.
    IMERGE_CHECK(slowdown >= 0.9, table.where(row.line), ": compute_slowdown ", slowdown,
                 " says compute ran faster beside an all-reduce than alone; measure again on an "
                 "otherwise idle machine");
    const int workers = static_cast<int>(table.wholeNumber(row, "workers", 1));
    if (workers >= 2) slowdowns[workers].push_back(std::max(1.0, slowdown));
  }
  MeasuredContention contention;
  // The samples are readCommSamplesCsv's; read again to reuse its field rules.
  contention.besideCompute_ =
      std::make_shared<ClusterProfile>(fitMeasuredCluster(source, readCommSamplesCsv(path)));
  for (auto& [workers, values] : slowdowns) {
    std::sort(values.begin(), values.end());
    contention.computeSlowdown_[workers] = values[values.size() / 2];
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
