// imerge-scale's compute inputs (contract in compute_inputs.h).
#include "apps/scale/compute_inputs.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <iostream>

#include "core/error.h"
#include "distributed/profiling/flops_profile.h"
#include "models/registry.h"

namespace imerge::apps {
namespace {

using distributed::ComputeProfile;

double positiveNumber(const std::string& text, const std::string& flag, const std::string& entry) {
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  IMERGE_CHECK(
      error == std::errc() && end == text.data() + text.size() && std::isfinite(value) && value > 0,
      flag, " ", entry, ": '", text, "' is not a positive number");
  return value;
}

// The FLOPs-derived profile of `model` at `gigaflops`, on the synthetic data's shapes.
ComputeProfile flopsProfile(const std::string& model, int64_t imageSize, int64_t batch,
                            double gigaflops) {
  const int64_t classes = imageSize <= 64 ? 10 : 1000;  // as the synthetic data
  auto network = models::buildModel(
      model, {.inChannels = 3, .classes = classes, .smallImages = imageSize <= 64});
  std::cout << model << ": counting FLOPs at " << imageSize << "x" << imageSize << "\n";
  ComputeProfile profile =
      distributed::profileFromFlops(*network, {3, imageSize, imageSize}, batch, gigaflops);
  profile.model = model;
  return profile;
}

}  // namespace

std::map<std::string, double> parsePerModelNumbers(const std::vector<std::string>& entries,
                                                   const std::vector<std::string>& models,
                                                   const std::string& flag) {
  std::map<std::string, double> values;
  for (const std::string& entry : entries) {
    const size_t equals = entry.find('=');
    if (equals == std::string::npos) {
      const double value = positiveNumber(entry, flag, entry);
      for (const std::string& model : models) {
        IMERGE_CHECK(values.emplace(model, value).second, flag, " ", entry, ": ", model,
                     " was given a value twice");
      }
      continue;
    }
    const std::string model = entry.substr(0, equals);
    IMERGE_CHECK(std::find(models.begin(), models.end(), model) != models.end(), flag, " ", entry,
                 ": '", model, "' is not one of the models of this run (--model)");
    IMERGE_CHECK(
        values.emplace(model, positiveNumber(entry.substr(equals + 1), flag, entry)).second, flag,
        " ", entry, ": ", model, " was given a value twice");
  }
  return values;
}

ComputeProfiles::ComputeProfiles(const ComputeInputs& inputs,
                                 const std::vector<std::string>& models, int64_t batchPerWorker,
                                 int64_t imageSize, bool measuredRunsProvide)
    : gigaflops_(parsePerModelNumbers(inputs.deviceGflops, models, "--device-gflops")),
      imagesPerSecond_(parsePerModelNumbers(inputs.singleWorkerImagesPerSecond, models,
                                            "--single-worker-images-per-s")) {
  for (const std::string& path : inputs.profiles) {
    ComputeProfile profile = distributed::readComputeProfile(path);
    std::string model = profile.model;
    if (model.empty()) {
      IMERGE_CHECK(models.size() == 1, "--profile ", path,
                   ": the profile names no model (field 'model') and this run has ", models.size(),
                   " models; profiles of several models must name theirs");
      model = models.front();
    }
    IMERGE_CHECK(std::find(models.begin(), models.end(), model) != models.end(), "--profile ", path,
                 ": a profile of ", model, ", which is not one of the models (--model)");
    IMERGE_CHECK(profile.batchPerWorker == 0 || profile.batchPerWorker == batchPerWorker,
                 "--profile ", path, ": measured at batch ", profile.batchPerWorker,
                 " per worker, but --batch-size is ", batchPerWorker);
    IMERGE_CHECK(profileFiles_.emplace(model, path).second, "--profile ", path, ": ", model,
                 " already has the profile ", profileFiles_[model]);
    profiles_[model] = std::move(profile);
  }
  for (const std::string& model : models) {
    const int inputsGiven = static_cast<int>(
        gigaflops_.count(model) + imagesPerSecond_.count(model) + profileFiles_.count(model));
    IMERGE_CHECK(inputsGiven <= 1, model, ": ", inputsGiven,
                 " compute inputs (--device-gflops, --single-worker-images-per-s, --profile); "
                 "give one");
    IMERGE_CHECK(inputsGiven == 1 || measuredRunsProvide, model,
                 ": no compute input; give --device-gflops ", model,
                 "=G, --single-worker-images-per-s ", model, "=X, --profile FILE (imerge-train ",
                 "--profile on ", model, ") or --measure-up-to N (real runs write profiles)");
    // Built once here: counting a model's FLOPs builds the model, which takes seconds for
    // ResNet-50, and every row of a study asks for its profile.
    if (auto found = gigaflops_.find(model); found != gigaflops_.end()) {
      profiles_[model] = flopsProfile(model, imageSize, batchPerWorker, found->second);
    }
    if (auto found = imagesPerSecond_.find(model); found != imagesPerSecond_.end()) {
      // The FLOPs profile's shape, its iteration brought to batch / X seconds.
      const ComputeProfile shape = flopsProfile(model, imageSize, batchPerWorker, 1000.0);
      const double wanted = static_cast<double>(batchPerWorker) / found->second;
      profiles_[model] = distributed::scaledComputeProfile(shape, wanted / shape.computeSeconds());
    }
  }
}

std::optional<ComputeProfile> ComputeProfiles::profileFor(const std::string& model) const {
  if (auto found = profiles_.find(model); found != profiles_.end()) return found->second;
  return std::nullopt;
}

std::string ComputeProfiles::sourceOf(const std::string& model) const {
  if (auto found = profileFiles_.find(model); found != profileFiles_.end()) {
    return "profile " + found->second;
  }
  if (auto found = gigaflops_.find(model); found != gigaflops_.end()) {
    return detail::concat(found->second, " GFLOP/s");
  }
  if (auto found = imagesPerSecond_.find(model); found != imagesPerSecond_.end()) {
    return detail::concat(found->second, " images/s on one worker");
  }
  return "measured runs";
}

}  // namespace imerge::apps
