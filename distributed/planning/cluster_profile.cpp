// Cluster profiles and the published tables they come from (contracts in cluster_profile.h).
#include "distributed/planning/cluster_profile.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include "core/error.h"
#include "distributed/planning/csv_fields.h"

namespace imerge::distributed {
namespace {

// The measured count nearest to `workers` in log(workers); a tie goes to the larger count.
template <typename Value>
int nearestCount(const std::map<int, Value>& byWorkers, int workers) {
  int best = byWorkers.begin()->first;
  double bestDistance = std::numeric_limits<double>::infinity();
  for (const auto& [count, value] : byWorkers) {
    const double distance = std::abs(std::log(static_cast<double>(count) / workers));
    if (distance <= bestDistance) {  // counts increase, so `<=` lets a tie go to the larger
      best = count;
      bestDistance = distance;
    }
  }
  return best;
}

// The published rows the built-in clusters (cluster_catalog.h) are made of: the same text as
// tests/reference/published/mgwfbp_alpha_beta.csv and imerge_comm_small_messages.csv (a test checks
// they agree).
constexpr const char* kBuiltinAlphaBeta = R"(network,workers,a_seconds,b_seconds_per_byte
10GbE,2,2.55e-6,9.84e-11
10GbE,4,4.20e-5,2.06e-10
10GbE,8,5.23e-4,8.57e-10
10GbE,16,9.08e-4,7.40e-10
10GbE,32,4.04e-3,8.64e-10
10GbE,64,7.04e-3,9.64e-10
56GbIB,8,9.75e-5,3.06e-10
56GbIB,16,2.36e-4,4.06e-10
56GbIB,32,4.06e-4,4.91e-10
56GbIB,64,8.06e-4,5.89e-10
)";
constexpr const char* kBuiltinSmallMessages = R"(nodes,message_elems,time
8,10,0.002
16,10,0.022
32,10,0.07
8,100,0.003
16,100,0.025
32,100,0.075
8,1000,0.01
16,1000,0.03
32,1000,0.08
8,10000,0.02
16,10000,0.04
32,10000,0.095
)";

}  // namespace

// ---- RingScaledCommModel ----

double RingScaledCommModel::latencyFactor(int measuredWorkers, int workers) {
  return static_cast<double>(workers - 1) / (measuredWorkers - 1);
}

double RingScaledCommModel::bandwidthFactor(int measuredWorkers, int workers) {
  const double measured = static_cast<double>(measuredWorkers - 1) / measuredWorkers;
  return (static_cast<double>(workers - 1) / workers) / measured;
}

RingScaledCommModel::RingScaledCommModel(int measuredWorkers, std::vector<Piece> pieces,
                                         std::string measuredText)
    : measuredWorkers_(measuredWorkers),
      pieces_(std::move(pieces)),
      measuredText_(std::move(measuredText)) {
  IMERGE_CHECK(measuredWorkers_ >= 2, "RingScaledCommModel: measured at ", measuredWorkers_,
               " worker(s); scaling needs a measurement among 2 or more (one worker "
               "communicates nothing)");
  IMERGE_CHECK(!pieces_.empty() && pieces_.front().startBytes == 0,
               "RingScaledCommModel: the first piece must start at 0 bytes");
  for (size_t i = 0; i < pieces_.size(); ++i) {
    const Piece& piece = pieces_[i];
    IMERGE_CHECK(i == 0 || piece.startBytes > pieces_[i - 1].startBytes,
                 "RingScaledCommModel: piece ", i, " starts at ", piece.startBytes,
                 " bytes; pieces must start in increasing order");
    IMERGE_CHECK(std::isfinite(piece.latencySeconds) && piece.latencySeconds >= 0 &&
                     std::isfinite(piece.slopeSecondsPerByte) && piece.slopeSecondsPerByte >= 0,
                 "RingScaledCommModel: piece ", i, " has latency ", piece.latencySeconds,
                 " s and slope ", piece.slopeSecondsPerByte,
                 " s per byte; both must be finite and not negative");
  }
}

double RingScaledCommModel::seconds(size_t bytes, int workers) const {
  IMERGE_CHECK(workers >= 1, "RingScaledCommModel: workers must be at least 1, not ", workers);
  const double latency = latencyFactor(measuredWorkers_, workers);
  const double bandwidth = bandwidthFactor(measuredWorkers_, workers);
  // Few pieces: a backward scan finds the last one that starts at or below `bytes`.
  for (size_t i = pieces_.size(); i-- > 0;) {
    const Piece& piece = pieces_[i];
    if (bytes >= piece.startBytes) {
      return latency * piece.latencySeconds +
             bandwidth * piece.slopeSecondsPerByte * static_cast<double>(bytes - piece.startBytes);
    }
  }
  return 0;  // unreachable: the first piece starts at 0
}

std::string RingScaledCommModel::describe() const {
  return detail::concat("ring-scaled from ", measuredWorkers_, " workers: ", measuredText_);
}

std::vector<CommPiece> RingScaledCommModel::piecesAt(int workers) const {
  IMERGE_CHECK(workers >= 1, "RingScaledCommModel: workers must be at least 1, not ", workers);
  const double latency = latencyFactor(measuredWorkers_, workers);
  const double bandwidth = bandwidthFactor(measuredWorkers_, workers);
  std::vector<CommPiece> scaled;
  for (const Piece& piece : pieces_) {
    scaled.push_back(
        {piece.startBytes, latency * piece.latencySeconds, bandwidth * piece.slopeSecondsPerByte});
  }
  return scaled;
}

std::unique_ptr<RingScaledCommModel> scaledToWorkers(const CommModel& model, int measuredWorkers) {
  // The model's curve at the count it stands for; each piece's cost at its first byte is its
  // startup, and only the growth above it scales as bandwidth (the file comment of
  // cluster_profile.h). A ring-scaled model is re-based: its pieces as they are there.
  return std::make_unique<RingScaledCommModel>(measuredWorkers, model.piecesAt(measuredWorkers),
                                               model.describe());
}

// ---- ClusterProfile ----

ClusterProfile::ClusterProfile(std::string name,
                               std::map<int, std::shared_ptr<const CommModel>> modelsByWorkers)
    : name_(std::move(name)) {
  IMERGE_CHECK(!modelsByWorkers.empty(), "ClusterProfile '", name_,
               "': no measured worker count; a profile needs at least one");
  for (auto& [workers, model] : modelsByWorkers) {
    IMERGE_CHECK(model != nullptr, "ClusterProfile '", name_, "': no model for ", workers,
                 " workers");
    IMERGE_CHECK(workers >= 2, "ClusterProfile '", name_, "': a model for ", workers,
                 " worker(s); measured counts must be 2 or more (one worker communicates nothing)");
    std::shared_ptr<const RingScaledCommModel> scaled = scaledToWorkers(*model, workers);
    measured_[workers] = {std::move(model), std::move(scaled)};
  }
}

int ClusterProfile::nearestMeasuredWorkers(int workers) const {
  IMERGE_CHECK(workers >= 1, "ClusterProfile '", name_, "': workers must be at least 1, not ",
               workers);
  return nearestCount(measured_, workers);
}

const CommModel& ClusterProfile::modelFor(int workers) const {
  const int nearest = nearestMeasuredWorkers(workers);
  const Measured& measured = measured_.at(nearest);
  if (nearest == workers) return *measured.model;
  return *measured.scaled;
}

double ClusterProfile::seconds(size_t bytes, int workers) const {
  return modelFor(workers).seconds(bytes, workers);
}

std::vector<CommPiece> ClusterProfile::piecesAt(int workers) const {
  return modelFor(workers).piecesAt(workers);
}

std::vector<int> ClusterProfile::measuredWorkerCounts() const {
  std::vector<int> counts;
  for (const auto& entry : measured_) counts.push_back(entry.first);
  return counts;
}

std::string ClusterProfile::describe() const {
  std::string text = "cluster " + name_ + ":";
  for (const auto& [workers, measured] : measured_) {
    text += detail::concat(" ", workers, " workers: ", measured.model->describe(), ";");
  }
  return text + " other counts ring-scaled from the nearest";
}

ClusterProfile withScaledCosts(const ClusterProfile& profile, double startupScale,
                               double bandwidthScale) {
  IMERGE_CHECK(std::isfinite(startupScale) && startupScale > 0 && std::isfinite(bandwidthScale) &&
                   bandwidthScale > 0,
               "cluster ", profile.name(), ": the startup scale ", startupScale,
               " and the bandwidth scale ", bandwidthScale, " must be finite and above 0");
  std::map<int, std::shared_ptr<const CommModel>> models;
  for (int workers : profile.measuredWorkerCounts()) {
    std::vector<CommPiece> pieces = profile.piecesAt(workers);
    for (CommPiece& piece : pieces) {
      piece.latencySeconds *= startupScale;
      piece.slopeSecondsPerByte /= bandwidthScale;
    }
    models[workers] = std::make_shared<RingScaledCommModel>(
        workers, std::move(pieces),
        detail::concat(profile.modelFor(workers).describe(), " with startups x", startupScale,
                       " and bandwidth x", bandwidthScale));
  }
  return ClusterProfile(detail::concat(profile.name(), " (startup x", startupScale, ", bandwidth x",
                                       bandwidthScale, ")"),
                        std::move(models));
}

// ---- tables ----

std::map<std::string, ClusterProfile> parseAlphaBetaProfiles(std::istream& text,
                                                             const std::string& source) {
  const CsvTable table(text, source, {"network", "workers", "a_seconds", "b_seconds_per_byte"});
  struct Row {
    size_t line;
    double alpha;
    double beta;
  };
  std::map<std::string, std::map<int, Row>> byNetwork;
  for (const CsvTable::Row& row : table.rows()) {
    const std::string& network = table.text(row, "network");
    IMERGE_CHECK(!network.empty(), table.where(row.line), ": field 'network' is empty");
    const int workers = static_cast<int>(table.wholeNumber(row, "workers", 2));
    const Row parsed{row.line, table.number(row, "a_seconds"),
                     table.number(row, "b_seconds_per_byte")};
    const auto [entry, inserted] = byNetwork[network].emplace(workers, parsed);
    IMERGE_CHECK(inserted, table.where(row.line), ": field 'workers': ", network, " at ", workers,
                 " workers is already on line ", entry->second.line);
  }
  std::map<std::string, ClusterProfile> profiles;
  for (const auto& [network, rows] : byNetwork) {
    std::map<int, std::shared_ptr<const CommModel>> models;
    const Row* previous = nullptr;
    int previousWorkers = 0;
    for (const auto& [workers, row] : rows) {
      IMERGE_CHECK(previous == nullptr || row.alpha >= previous->alpha, table.where(row.line),
                   ": field 'a_seconds' is ", row.alpha, " s for ", network, " at ", workers,
                   " workers, below the ", previous ? previous->alpha : 0.0, " s at ",
                   previousWorkers, " workers (line ", previous ? previous->line : 0,
                   "); the startup must not decrease as workers grow");
      models[workers] = std::make_shared<LinearCommModel>(row.alpha, row.beta);
      previous = &row;
      previousWorkers = workers;
    }
    profiles.emplace(network, ClusterProfile(network, std::move(models)));
  }
  return profiles;
}

std::map<std::string, ClusterProfile> readAlphaBetaProfiles(const std::string& path) {
  std::ifstream file =
      openTableFile(path, "a + bM table (network,workers,a_seconds,b_seconds_per_byte)");
  return parseAlphaBetaProfiles(file, path);
}

ClusterProfile readAlphaBetaProfile(const std::string& path, const std::string& network) {
  const auto profiles = readAlphaBetaProfiles(path);
  const auto found = profiles.find(network);
  if (found == profiles.end()) {
    std::string names;
    for (const auto& entry : profiles) names += (names.empty() ? "" : ", ") + entry.first;
    IMERGE_FAIL(path, ": no network '", network, "'; the table has ", names);
  }
  return found->second;
}

SmallMessageCosts parseSmallMessageCosts(std::istream& text, const std::string& source) {
  const CsvTable table(text, source, {"nodes", "message_elems", "time"});
  constexpr double kSecondsPerTableUnit = 1e-3;  // milliseconds (see the header)
  struct Point {
    size_t line;
    double seconds;
  };
  std::map<int, std::map<size_t, Point>> byNodes;
  for (const CsvTable::Row& row : table.rows()) {
    const int nodes = static_cast<int>(table.wholeNumber(row, "nodes", 2));
    const auto elements = static_cast<size_t>(table.wholeNumber(row, "message_elems", 1));
    const double seconds = table.number(row, "time") * kSecondsPerTableUnit;
    IMERGE_CHECK(seconds > 0, table.where(row.line),
                 ": field 'time' is 0; a measured all-reduce takes some time");
    const auto [entry, inserted] = byNodes[nodes].emplace(elements, Point{row.line, seconds});
    IMERGE_CHECK(inserted, table.where(row.line), ": field 'message_elems': ", elements,
                 " elements at ", nodes, " nodes is already on line ", entry->second.line);
  }
  SmallMessageCosts costs;
  for (const auto& [nodes, points] : byNodes) {
    const Point* previous = nullptr;
    size_t previousElements = 0;
    for (const auto& [elements, point] : points) {
      IMERGE_CHECK(previous == nullptr || point.seconds >= previous->seconds,
                   table.where(point.line), ": field 'time' is ", point.seconds * 1e3, " ms for ",
                   elements, " elements at ", nodes, " nodes, below the ",
                   previous ? previous->seconds * 1e3 : 0.0, " ms of the smaller message of ",
                   previousElements, " elements (line ", previous ? previous->line : 0,
                   "); a larger message must not cost less");
      previous = &point;
      previousElements = elements;
    }
    costs.flatSecondsByWorkers[nodes] = points.rbegin()->second.seconds;
    costs.largestBytes = std::max(costs.largestBytes, points.rbegin()->first * sizeof(float));
  }
  return costs;
}

SmallMessageCosts readSmallMessageCosts(const std::string& path) {
  std::ifstream file = openTableFile(path, "small-message table (nodes,message_elems,time)");
  return parseSmallMessageCosts(file, path);
}

ClusterProfile combineSmallAndLargeMessages(const std::string& name, const SmallMessageCosts& small,
                                            const ClusterProfile& large, size_t breakpointBytes) {
  IMERGE_CHECK(!small.flatSecondsByWorkers.empty(), "combineSmallAndLargeMessages '", name,
               "': no small-message costs");
  IMERGE_CHECK(breakpointBytes > 0, "combineSmallAndLargeMessages '", name,
               "': the breakpoint must be above 0 bytes");
  std::map<int, std::shared_ptr<const CommModel>> models;
  for (int workers : large.measuredWorkerCounts()) {
    const int nearest = nearestCount(small.flatSecondsByWorkers, workers);
    const double flat = small.flatSecondsByWorkers.at(nearest) *
                        RingScaledCommModel::latencyFactor(nearest, workers);
    // The large-message model of this count from the breakpoint on, as piecewise segments.
    const CommModel& above = large.modelFor(workers);
    // The piece covering the breakpoint starts there; later ones stay as they are.
    std::vector<PiecewiseCommModel::Segment> segments;
    const auto asSegment = [](size_t startBytes, const CommPiece& piece) {
      return PiecewiseCommModel::Segment{
          startBytes,
          piece.latencySeconds - piece.slopeSecondsPerByte * static_cast<double>(piece.startBytes),
          piece.slopeSecondsPerByte};
    };
    const std::vector<CommPiece> pieces = above.piecesAt(workers);
    CommPiece covering = pieces.front();  // the first piece starts at 0
    for (const CommPiece& piece : pieces) {
      if (piece.startBytes <= breakpointBytes) covering = piece;
    }
    segments.push_back(asSegment(breakpointBytes, covering));
    for (const CommPiece& piece : pieces) {
      if (piece.startBytes > breakpointBytes)
        segments.push_back(asSegment(piece.startBytes, piece));
    }
    models[workers] = std::make_shared<PiecewiseCommModel>(flat, std::move(segments));
  }
  return ClusterProfile(name, std::move(models));
}

std::map<std::string, ClusterProfile> builtInAlphaBetaProfiles() {
  std::istringstream text(kBuiltinAlphaBeta);
  return parseAlphaBetaProfiles(text, "built-in mgwfbp_alpha_beta.csv");
}

SmallMessageCosts builtInSmallMessageCosts() {
  std::istringstream text(kBuiltinSmallMessages);
  return parseSmallMessageCosts(text, "built-in imerge_comm_small_messages.csv");
}

}  // namespace imerge::distributed
