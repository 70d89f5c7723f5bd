// Clusters as study inputs (contract and the accepted forms in cluster_catalog.h).
#include "distributed/planning/cluster_catalog.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string>

#include "core/error.h"
#include "distributed/planning/csv_fields.h"
#include "distributed/planning/measurement_sizes.h"
#include "distributed/planning/readable_units.h"

namespace imerge::distributed {
namespace {

// The built-in networks of the a + bM table, by the names --cluster spells.
const std::map<std::string, std::string>& builtInNetworks() {
  static const std::map<std::string, std::string> networks = {{"10gbe", "10GbE"},
                                                              {"56gb-ib", "56GbIB"}};
  return networks;
}

std::string builtInNames() {
  std::string names;
  for (const BuiltInCluster& cluster : builtInClusters()) {
    names += (names.empty() ? "" : ", ") + cluster.name;
  }
  return names;
}

enum class TableKind { Samples, AlphaBeta, SmallMessages };

// What the file at `path` holds, by its header (the first line neither blank nor a comment).
TableKind tableKind(const std::string& path, const std::string& flag) {
  std::ifstream file = openTableFile(path, "cluster table");
  std::string line;
  size_t number = 0;
  while (std::getline(file, line)) {
    ++number;
    const std::string text = trimmed(line);
    if (text.empty() || text[0] == '#') continue;
    std::set<std::string> columns;
    for (const std::string& field : splitFields(text)) columns.insert(field);
    if (columns.count("bytes") && columns.count("seconds")) return TableKind::Samples;
    if (columns.count("a_seconds") && columns.count("b_seconds_per_byte")) {
      return TableKind::AlphaBeta;
    }
    if (columns.count("message_elems") && columns.count("time")) return TableKind::SmallMessages;
    IMERGE_FAIL(flag, " ", path, ":", number, ": the header '", text,
                "' is none of the cluster tables: imerge-commbench samples (bytes,workers,"
                "seconds), an a + bM table (network,workers,a_seconds,b_seconds_per_byte) or a "
                "small-message table (nodes,message_elems,time)");
  }
  IMERGE_FAIL(flag, " ", path, ": the file has no header line");
}

// An a + bM table's network: the only one, or the one FILE:NETWORK names.
ClusterProfile alphaBetaFile(const std::string& path, const std::string& network,
                             const std::string& flag) {
  if (!network.empty()) return readAlphaBetaProfile(path, network);
  auto profiles = readAlphaBetaProfiles(path);
  if (profiles.size() == 1) return profiles.begin()->second;
  std::string names;
  for (const auto& entry : profiles) names += (names.empty() ? "" : ", ") + entry.first;
  IMERGE_FAIL(flag, " ", path, ": the table holds the networks ", names, "; name one as ", path,
              ":NETWORK");
}

// A file, or FILE:NETWORK when the text before the last ':' is a file and the whole is not.
struct FileSpec {
  std::string path;
  std::string network;
};
std::optional<FileSpec> asFile(const std::string& spec) {
  std::error_code ignored;
  if (std::filesystem::exists(spec, ignored)) return FileSpec{spec, ""};
  const size_t colon = spec.rfind(':');
  if (colon != std::string::npos && std::filesystem::exists(spec.substr(0, colon), ignored)) {
    return FileSpec{spec.substr(0, colon), spec.substr(colon + 1)};
  }
  return std::nullopt;
}

struct Loaded {
  std::shared_ptr<const ClusterProfile> truth;
  std::map<int, std::vector<CommSample>> measured;
};

// A cluster the large-message side of SMALL+LARGE may be, or a whole cluster by itself.
Loaded loadWhole(const std::string& spec, const std::string& flag) {
  if (const auto network = builtInNetworks().find(spec); network != builtInNetworks().end()) {
    return {std::make_shared<ClusterProfile>(builtInAlphaBetaProfiles().at(network->second)), {}};
  }
  const std::optional<FileSpec> file = asFile(spec);
  IMERGE_CHECK(file.has_value(), flag, " ", spec,
               ": neither a file nor a built-in cluster; the built-in ones are ", builtInNames());
  switch (tableKind(file->path, flag)) {
    case TableKind::AlphaBeta:
      return {std::make_shared<ClusterProfile>(alphaBetaFile(file->path, file->network, flag)), {}};
    case TableKind::Samples: {
      IMERGE_CHECK(file->network.empty(), flag, " ", spec, ": ", file->path,
                   " holds samples, which have no networks to choose from");
      const std::vector<CommSample> samples = readCommSamplesCsv(file->path);
      Loaded loaded{std::make_shared<ClusterProfile>(fitMeasuredCluster(file->path, samples)), {}};
      for (const CommSample& sample : samples) {
        if (sample.workers >= 2) loaded.measured[sample.workers].push_back(sample);
      }
      return loaded;
    }
    case TableKind::SmallMessages:
      break;
  }
  IMERGE_FAIL(flag, " ", spec, ": a small-message table gives the cost of small messages only; ",
              "combine it with a large-message cluster as ", spec, "+10gbe (or +56gb-ib, or ",
              "+FILE)");
}

SmallMessageCosts loadSmall(const std::string& spec, const std::string& flag) {
  if (spec == "paper-small") return builtInSmallMessageCosts();
  const std::optional<FileSpec> file = asFile(spec);
  IMERGE_CHECK(file.has_value() && file->network.empty(), flag, " ", spec,
               ": the part before '+' must be paper-small or a small-message table file "
               "(nodes,message_elems,time)");
  IMERGE_CHECK(tableKind(file->path, flag) == TableKind::SmallMessages, flag, " ", spec,
               ": the part before '+' is not a small-message table (nodes,message_elems,time)");
  return readSmallMessageCosts(file->path);
}

}  // namespace

const std::vector<BuiltInCluster>& builtInClusters() {
  static const std::vector<BuiltInCluster> clusters = {
      {"10gbe", "MG-WFBP's published a + bM constants for 10GbE, 2-64 workers"},
      {"56gb-ib", "MG-WFBP's published a + bM constants for 56Gb InfiniBand, 8-64 workers"},
      {"paper-small+10gbe",
       "the IMerge paper's small-message costs (8-32 nodes) below 32768 elements, 10gbe above"},
      {"paper-small+56gb-ib",
       "the IMerge paper's small-message costs below 32768 elements, 56gb-ib above"},
  };
  return clusters;
}

ClusterInput::ClusterInput(std::shared_ptr<const ClusterProfile> truth,
                           std::map<int, std::vector<CommSample>> measured)
    : truth_(std::move(truth)), measured_(std::move(measured)) {}

std::string ClusterInput::truthAt(int workers) const {
  if (workers < 2) return "no communication";
  const int nearest = truth_->nearestMeasuredWorkers(workers);
  if (nearest == workers) return measured() ? "fitted to the samples" : "as given";
  return detail::concat("ring-scaled from ", nearest, " workers");
}

std::vector<CommSample> ClusterInput::beliefSamples(int workers) const {
  workers = std::max(workers, 2);
  if (auto found = measured_.find(workers); found != measured_.end()) return found->second;
  std::vector<CommSample> samples;
  for (size_t bytes : sweepMeasurementSizes(4, size_t{256} << 20)) {
    samples.push_back({bytes, workers, truth_->seconds(bytes, workers)});
  }
  return samples;
}

ClusterInput ClusterInput::withScaledCosts(double startupScale, double bandwidthScale) const {
  if (startupScale == 1 && bandwidthScale == 1) return *this;
  return ClusterInput(std::make_shared<ClusterProfile>(
                          distributed::withScaledCosts(*truth_, startupScale, bandwidthScale)),
                      {});
}

void checkFitFollowsSamples(const std::string& source, int workers, const CommModel& fit,
                            const std::vector<CommSample>& samples) {
  std::map<size_t, std::pair<double, int>> sumAndCount;  // per size, over repetitions
  for (const CommSample& sample : samples) {
    auto& [sum, count] = sumAndCount[sample.bytes];
    sum += sample.seconds;
    ++count;
  }
  auto refuse = [&](size_t bytes, double fitted, const std::string& against) {
    IMERGE_FAIL(source, ": the fit at ", workers, " workers makes ", bytes, " bytes cost ",
                readableSeconds(fitted), ", more than 2x ", against,
                " (a knee the piecewise fit cannot follow: ", fit.describe(),
                "); measure more sizes around it");
  };
  std::optional<std::pair<size_t, double>> previous;
  for (const auto& [bytes, sumCount] : sumAndCount) {
    const double measured = sumCount.first / sumCount.second;
    const double fitted = fit.seconds(bytes, workers);
    if (fitted > 2 * measured) {
      refuse(bytes, fitted, "the measured " + readableSeconds(measured));
    }
    if (previous) {
      // Halfway (geometrically) to the previous size: a segment that starts between two sampled
      // sizes can charge what lies between them anything; the dearer neighbour bounds it.
      const size_t between = static_cast<size_t>(
          std::sqrt(static_cast<double>(previous->first) * static_cast<double>(bytes)));
      const double dearer = std::max(previous->second, measured);
      const double fittedBetween = fit.seconds(between, workers);
      if (between > previous->first && between < bytes && fittedBetween > 2 * dearer) {
        refuse(
            between, fittedBetween,
            detail::concat("the measured ", readableSeconds(dearer), " of its dearer neighbour (",
                           previous->first, " and ", bytes, " bytes were sampled)"));
      }
    }
    previous = std::make_pair(bytes, measured);
  }
}

ClusterProfile fitMeasuredCluster(const std::string& source,
                                  const std::vector<CommSample>& samples) {
  std::map<int, std::vector<CommSample>> byWorkers;
  for (const CommSample& sample : samples) {
    if (sample.workers >= 2) byWorkers[sample.workers].push_back(sample);
  }
  IMERGE_CHECK(!byWorkers.empty(), source,
               ": no samples at 2 or more workers (column 'workers'); one worker says nothing "
               "about the network");
  std::map<int, std::shared_ptr<const CommModel>> fits;
  for (const auto& [workers, atCount] : byWorkers) {
    std::shared_ptr<const PiecewiseCommModel> fit;
    try {
      fit = std::make_shared<PiecewiseCommModel>(fitPiecewise(atCount));
    } catch (const Error& error) {
      IMERGE_FAIL(source, ": the samples at ", workers,
                  " workers cannot be fitted: ", error.what());
    }
    checkFitFollowsSamples(source, workers, *fit, atCount);
    fits[workers] = std::move(fit);
  }
  return ClusterProfile(source, std::move(fits));
}

ClusterInput loadCluster(const std::string& spec, const std::string& flag) {
  IMERGE_CHECK(!spec.empty(), flag, ": empty; the built-in clusters are ", builtInNames());
  IMERGE_CHECK(spec != "paper-small", flag,
               " paper-small: the IMerge paper's small-message costs "
               "alone; combine them with a large-message cluster as paper-small+10gbe or "
               "paper-small+56gb-ib");
  // SMALL+LARGE, unless the whole is a file (a path may hold a '+').
  const size_t plus = spec.find('+');
  std::error_code ignored;
  if (plus != std::string::npos && !std::filesystem::exists(spec, ignored)) {
    const SmallMessageCosts small = loadSmall(spec.substr(0, plus), flag);
    const Loaded large = loadWhole(spec.substr(plus + 1), flag);
    // Beliefs sample the combined cost, not the large side's measurements alone.
    auto combined = std::make_shared<ClusterProfile>(
        combineSmallAndLargeMessages(spec, small, *large.truth, kPaperBreakpointBytes));
    return ClusterInput(std::move(combined), {});
  }
  Loaded whole = loadWhole(spec, flag);
  return ClusterInput(std::move(whole.truth), std::move(whole.measured));
}

}  // namespace imerge::distributed
