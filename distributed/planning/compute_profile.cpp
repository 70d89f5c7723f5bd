// Compute profiles (contract in compute_profile.h).
#include "distributed/planning/compute_profile.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "core/error.h"
#include "distributed/planning/csv_fields.h"

namespace imerge::distributed {
namespace {

bool endsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// ---- JSON fields ----

double jsonNumber(const nlohmann::json& object, const std::string& key, const std::string& where) {
  IMERGE_CHECK(object.contains(key), where, ": field '", key, "' is missing");
  const nlohmann::json& value = object.at(key);
  IMERGE_CHECK(value.is_number(), where, ": field '", key, "' is ", value.dump(),
               ", which is not a number");
  const double number = value.get<double>();
  IMERGE_CHECK(std::isfinite(number), where, ": field '", key, "' is not finite");
  IMERGE_CHECK(number >= 0, where, ": field '", key, "' is ", number, ", which is negative");
  return number;
}

ComputeProfile readJson(const std::string& path) {
  std::ifstream file = openTableFile(path, "compute profile");
  nlohmann::json document;
  try {
    document = nlohmann::json::parse(file);
  } catch (const nlohmann::json::exception& error) {
    IMERGE_FAIL(path, ": not valid JSON (", error.what(), ")");
  }
  IMERGE_CHECK(document.is_object(), path, ": a compute profile is a JSON object");
  ComputeProfile profile;
  if (document.contains("model")) {
    IMERGE_CHECK(document["model"].is_string(), path, ": field 'model' must be a string");
    profile.model = document["model"].get<std::string>();
  }
  if (document.contains("batch_per_worker")) {
    const double batch = jsonNumber(document, "batch_per_worker", path);
    IMERGE_CHECK(batch == std::floor(batch), path, ": field 'batch_per_worker' is ", batch,
                 ", which is not a whole number");
    profile.batchPerWorker = static_cast<int64_t>(batch);
  }
  if (document.contains("optimizer_seconds")) {
    profile.optimizerSeconds = jsonNumber(document, "optimizer_seconds", path);
  }
  if (document.contains("other_seconds")) {
    profile.otherSeconds = jsonNumber(document, "other_seconds", path);
  }
  IMERGE_CHECK(document.contains("tensors") && document["tensors"].is_array(), path,
               ": field 'tensors' (an array of {name, bytes, backward_seconds, "
               "forward_seconds}) is missing");
  const nlohmann::json& tensors = document["tensors"];
  for (size_t k = 0; k < tensors.size(); ++k) {
    const std::string where = detail::concat(path, ": tensors[", k, "]");
    const nlohmann::json& entry = tensors[k];
    IMERGE_CHECK(entry.is_object(), where, " is not an object");
    IMERGE_CHECK(entry.contains("name") && entry["name"].is_string(), where,
                 ": field 'name' is missing or not a string");
    TensorInfo tensor;
    tensor.name = entry["name"].get<std::string>();
    const double bytes = jsonNumber(entry, "bytes", where);
    IMERGE_CHECK(bytes == std::floor(bytes) && bytes < 9.0e15, where, ": field 'bytes' is ", bytes,
                 ", which is not a whole number");
    tensor.bytes = static_cast<size_t>(bytes);
    tensor.backwardSeconds = jsonNumber(entry, "backward_seconds", where);
    profile.tensors.push_back(std::move(tensor));
    profile.forwardSecondsPerTensor.push_back(jsonNumber(entry, "forward_seconds", where));
  }
  return profile;
}

ComputeProfile readCsv(const std::string& path) {
  std::ifstream file = openTableFile(path, "compute profile");
  const CsvTable table(file, path, {"name", "bytes", "backward_seconds", "forward_seconds"},
                       "tensors");
  ComputeProfile profile;
  // "# key: value" lines above the header carry the profile's scalars.
  for (const CsvTable::Comment& comment : table.leadingComments()) {
    const size_t colon = comment.text.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = trimmed(std::string_view(comment.text).substr(0, colon));
    const std::string value = trimmed(std::string_view(comment.text).substr(colon + 1));
    const std::string where = table.where(comment.line);
    if (key == "model") profile.model = value;
    if (key == "batch_per_worker") {
      profile.batchPerWorker = static_cast<int64_t>(parseWholeNumber(value, where, key));
    }
    if (key == "optimizer_seconds") profile.optimizerSeconds = parseNumber(value, where, key);
    if (key == "other_seconds") profile.otherSeconds = parseNumber(value, where, key);
  }
  for (const CsvTable::Row& row : table.rows()) {
    TensorInfo tensor;
    tensor.name = table.text(row, "name");
    IMERGE_CHECK(!tensor.name.empty(), table.where(row.line), ": field 'name' is empty");
    tensor.bytes = static_cast<size_t>(table.wholeNumber(row, "bytes", 0));
    tensor.backwardSeconds = table.number(row, "backward_seconds");
    profile.forwardSecondsPerTensor.push_back(table.number(row, "forward_seconds"));
    profile.tensors.push_back(std::move(tensor));
  }
  return profile;
}

}  // namespace

double ComputeProfile::forwardSeconds() const {
  double total = 0;
  for (double seconds : forwardSecondsPerTensor) total += seconds;
  return total;
}

double ComputeProfile::backwardSeconds() const {
  const std::vector<double> ready = readyTimes(tensors);
  return ready.empty() ? 0 : ready.back();
}

std::vector<double> splitForwardByBackward(const std::vector<TensorInfo>& tensors,
                                           double forwardSeconds) {
  double backward = 0;
  for (const TensorInfo& tensor : tensors) backward += tensor.backwardSeconds;
  std::vector<double> split(tensors.size(), 0.0);
  for (size_t k = 0; k < tensors.size(); ++k) {
    split[k] = backward > 0 ? forwardSeconds * tensors[k].backwardSeconds / backward
                            : forwardSeconds / static_cast<double>(tensors.size());
  }
  return split;
}

void validateComputeProfile(const ComputeProfile& profile, const std::string& source) {
  IMERGE_CHECK(!profile.tensors.empty(), source, ": the compute profile has no tensors");
  IMERGE_CHECK(profile.forwardSecondsPerTensor.size() == profile.tensors.size(), source, ": ",
               profile.forwardSecondsPerTensor.size(), " forward times for ",
               profile.tensors.size(), " tensors");
  IMERGE_CHECK(std::isfinite(profile.optimizerSeconds) && profile.optimizerSeconds >= 0, source,
               ": optimizer_seconds ", profile.optimizerSeconds, " must be finite, not negative");
  IMERGE_CHECK(std::isfinite(profile.otherSeconds) && profile.otherSeconds >= 0, source,
               ": other_seconds ", profile.otherSeconds, " must be finite, not negative");
  IMERGE_CHECK(profile.batchPerWorker >= 0, source, ": batch_per_worker ", profile.batchPerWorker,
               " is negative");
  std::set<std::string> names;
  for (size_t k = 0; k < profile.tensors.size(); ++k) {
    const TensorInfo& tensor = profile.tensors[k];
    const std::string where = detail::concat(source, ": tensor ", k, " ('", tensor.name, "')");
    IMERGE_CHECK(!tensor.name.empty(), source, ": tensor ", k, " has no name");
    IMERGE_CHECK(names.insert(tensor.name).second, where, " appears twice");
    IMERGE_CHECK(std::isfinite(tensor.backwardSeconds) && tensor.backwardSeconds >= 0, where,
                 ": backward_seconds ", tensor.backwardSeconds, " must be finite, not negative");
    const double forward = profile.forwardSecondsPerTensor[k];
    IMERGE_CHECK(std::isfinite(forward) && forward >= 0, where, ": forward_seconds ", forward,
                 " must be finite, not negative");
  }
}

ComputeProfile scaledComputeProfile(ComputeProfile profile, double factor) {
  IMERGE_CHECK(std::isfinite(factor) && factor > 0, "scaledComputeProfile: the factor ", factor,
               " must be finite and above 0");
  for (TensorInfo& tensor : profile.tensors) tensor.backwardSeconds *= factor;
  for (double& forward : profile.forwardSecondsPerTensor) forward *= factor;
  profile.optimizerSeconds *= factor;
  profile.otherSeconds *= factor;
  return profile;
}

void writeComputeProfile(const std::string& path, const ComputeProfile& profile) {
  validateComputeProfile(profile, path);
  std::ofstream out(path);
  IMERGE_CHECK(out.is_open(), path, ": cannot write the compute profile");
  out.precision(17);  // every digit needed to read the same doubles back
  if (endsWith(path, ".json")) {
    nlohmann::json tensors = nlohmann::json::array();
    for (size_t k = 0; k < profile.tensors.size(); ++k) {
      tensors.push_back({{"name", profile.tensors[k].name},
                         {"bytes", profile.tensors[k].bytes},
                         {"backward_seconds", profile.tensors[k].backwardSeconds},
                         {"forward_seconds", profile.forwardSecondsPerTensor[k]}});
    }
    out << nlohmann::json{{"model", profile.model},
                          {"batch_per_worker", profile.batchPerWorker},
                          {"optimizer_seconds", profile.optimizerSeconds},
                          {"other_seconds", profile.otherSeconds},
                          {"tensors", std::move(tensors)}}
               .dump(1)
        << "\n";
  } else {
    out << "# model: " << profile.model << "\n# batch_per_worker: " << profile.batchPerWorker
        << "\n# optimizer_seconds: " << profile.optimizerSeconds
        << "\n# other_seconds: " << profile.otherSeconds
        << "\nname,bytes,backward_seconds,forward_seconds\n";
    for (size_t k = 0; k < profile.tensors.size(); ++k) {
      IMERGE_CHECK(profile.tensors[k].name.find(',') == std::string::npos, path, ": tensor name '",
                   profile.tensors[k].name, "' holds a comma; write the profile as .json");
      out << profile.tensors[k].name << "," << profile.tensors[k].bytes << ","
          << profile.tensors[k].backwardSeconds << "," << profile.forwardSecondsPerTensor[k]
          << "\n";
    }
  }
  IMERGE_CHECK(out.good(), path, ": writing the compute profile failed");
}

ComputeProfile readComputeProfile(const std::string& path) {
  ComputeProfile profile = endsWith(path, ".json") ? readJson(path) : readCsv(path);
  validateComputeProfile(profile, path);
  return profile;
}

}  // namespace imerge::distributed
