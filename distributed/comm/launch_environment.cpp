// The launcher's environment variables (contracts in launch_environment.h).
#include "distributed/comm/launch_environment.h"

#include <algorithm>
#include <climits>
#include <cstdlib>

namespace imerge::distributed {

namespace {

int envInt(const char* name, int fallback) {
  const char* value = std::getenv(name);
  if (!value || !*value) return fallback;
  char* end = nullptr;
  const long parsed = std::strtol(value, &end, 10);
  return (end && *end == '\0' && parsed >= 0 && parsed <= INT_MAX) ? static_cast<int>(parsed)
                                                                   : fallback;
}

}  // namespace

bool launchedByMpirun() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK"}) {
    if (std::getenv(name)) return true;
  }
  return false;
}

int localRankCount() {
  return std::max(1, envInt("OMPI_COMM_WORLD_LOCAL_SIZE", 1));
}

int localRank() {
  return envInt("OMPI_COMM_WORLD_LOCAL_RANK", 0);
}

}  // namespace imerge::distributed
