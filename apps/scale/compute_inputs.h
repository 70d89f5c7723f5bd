// imerge-scale's compute inputs: what one worker's iteration costs, per model, from the forms a
// user has at hand.
//
//   --device-gflops G | MODEL=G,...          the model's multiply-accumulates at G GFLOP/s
//                                            (profileFromFlops; --flops-gflops is the old name)
//   --single-worker-images-per-s MODEL=X,... the same profile's shape, scaled so that one worker
//                                            trains X images/s (the form papers publish)
//   --profile FILE [--profile FILE ...]      measured profiles (imerge-train --profile), each
//                                            naming its model in its "model" field
// A model may have one input; one without any is refused naming the flags, unless real runs
// (--measure-up-to) measure its profile.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "distributed/planning/compute_profile.h"

namespace imerge::apps {

struct ComputeInputs {
  std::vector<std::string> deviceGflops;                 // "G" or "MODEL=G" entries
  std::vector<std::string> singleWorkerImagesPerSecond;  // "MODEL=X" entries
  std::vector<std::string> profiles;                     // files
};

// "MODEL=X,..." (or a bare X for every model) as positive numbers per model. Refuses, naming
// the flag and the entry: a value that is not a positive number, a model not in `models`, a
// model given twice.
std::map<std::string, double> parsePerModelNumbers(const std::vector<std::string>& entries,
                                                   const std::vector<std::string>& models,
                                                   const std::string& flag);

class ComputeProfiles {
 public:
  // Checks every input against `models` (and the profiles' batch against batchPerWorker);
  // refuses a model with two inputs, and a model with none unless `measuredRunsProvide`.
  ComputeProfiles(const ComputeInputs& inputs, const std::vector<std::string>& models,
                  int64_t batchPerWorker, int64_t imageSize, bool measuredRunsProvide);

  // The profile of `model` from the inputs, or nothing when the measured runs must provide it.
  std::optional<distributed::ComputeProfile> profileFor(const std::string& model) const;
  // How `model`'s profile was obtained: "5000 GFLOP/s", "282 images/s on one worker",
  // "profile FILE", "measured runs".
  std::string sourceOf(const std::string& model) const;

 private:
  std::map<std::string, double> gigaflops_;
  std::map<std::string, double> imagesPerSecond_;
  std::map<std::string, std::string> profileFiles_;
  std::map<std::string, distributed::ComputeProfile> profiles_;  // from the inputs
};

}  // namespace imerge::apps
