// The planner's command-line flags, shared by imerge-train and imerge-scale so that both spell
// and check them alike.
#pragma once

#include <CLI/CLI.hpp>

#include "apps/flag_checks.h"
#include "distributed/planning/planner.h"

namespace imerge::apps {

// --fusion-bytes (fusion's bucket threshold) and --slice-elems (priority's slice size).
inline void addPlannerFlags(CLI::App& app, distributed::PlannerOptions& options) {
  app.add_option("--fusion-bytes", options.fusionBytes, "fusion: bucket size threshold in bytes")
      ->check(wholeNumber(1, int64_t{1} << 40))
      ->capture_default_str();
  app.add_option("--slice-elems", options.sliceElements, "priority: elements per slice")
      ->check(wholeNumber(1, int64_t{1} << 40))
      ->capture_default_str();
}

}  // namespace imerge::apps
