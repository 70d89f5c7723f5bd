// Communication models, their fitting, and the samples CSV (contracts in comm_model.h).
//
// Both fits work on weighted least-squares lines computed from running (Welford-style) moments
// rather than raw sums: sizes reach 1e9 bytes and times 1e-6 s, so raw sums of x^2 / y^2 would
// cancel catastrophically; centred moments stay exact to rounding.
#include "distributed/planning/comm_model.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

#include "core/error.h"
#include "distributed/planning/csv_fields.h"
#include "distributed/planning/readable_units.h"

namespace imerge::distributed {
namespace {

void checkWorkers(int workers, const char* who) {
  IMERGE_CHECK(workers >= 1, who, ": workers must be at least 1, not ", workers);
}

// The checks both fits share: samples exist, times are measured (> 0) and finite, and they are
// all for one worker count (the models do not scale with workers yet).
void checkSamples(const std::vector<CommSample>& samples, const char* who) {
  IMERGE_CHECK(!samples.empty(), who, ": no samples to fit");
  for (size_t i = 0; i < samples.size(); ++i) {
    const CommSample& sample = samples[i];
    IMERGE_CHECK(std::isfinite(sample.seconds) && sample.seconds > 0, who, ": sample ", i, " (",
                 sample.bytes, " bytes) has time ", sample.seconds,
                 " s; measured times must be positive and finite");
    IMERGE_CHECK(sample.workers >= 1, who, ": sample ", i, " (", sample.bytes, " bytes) has ",
                 sample.workers, " workers; it must be at least 1");
    IMERGE_CHECK(sample.workers == samples.front().workers, who, ": samples mix worker counts ",
                 samples.front().workers, " and ", sample.workers, " (sample ", i,
                 "); fit one worker count at a time");
  }
}

// Weighted moments of (x, y) pairs, extended one pair at a time.
class WeightedMoments {
 public:
  void add(double x, double y, double weight) {
    totalWeight_ += weight;
    const double dx = x - meanX_;
    const double dy = y - meanY_;
    meanX_ += weight / totalWeight_ * dx;
    meanY_ += weight / totalWeight_ * dy;
    sxx_ += weight * dx * (x - meanX_);
    sxy_ += weight * dx * (y - meanY_);
    syy_ += weight * dy * (y - meanY_);
  }
  double meanY() const { return meanY_; }
  double meanX() const { return meanX_; }
  // The best constant: the weighted mean, with its weighted squared error.
  double constantError() const { return std::max(0.0, syy_); }
  bool hasSpread() const { return sxx_ > 0; }
  double slope() const { return sxy_ / sxx_; }
  double lineError() const { return std::max(0.0, syy_ - sxy_ * sxy_ / sxx_); }

 private:
  double totalWeight_ = 0;
  double meanX_ = 0;
  double meanY_ = 0;
  double sxx_ = 0;
  double sxy_ = 0;
  double syy_ = 0;
};

struct Line {
  double intercept = 0;
  double slope = 0;
  double squaredError = 0;
};

// The samples grouped by size, sizes increasing; each entry holds every time measured there.
std::vector<std::pair<size_t, std::vector<double>>> groupBySize(
    const std::vector<CommSample>& samples) {
  std::map<size_t, std::vector<double>> bySize;
  for (const CommSample& sample : samples) bySize[sample.bytes].push_back(sample.seconds);
  return {bySize.begin(), bySize.end()};
}

double sumSquaredError(const std::vector<CommSample>& samples, double alpha, double beta) {
  double sum = 0;
  for (const CommSample& sample : samples) {
    const double residual = alpha + beta * static_cast<double>(sample.bytes) - sample.seconds;
    sum += residual * residual;
  }
  return sum;
}

}  // namespace

// ---- LinearCommModel ----

LinearCommModel::LinearCommModel(double alphaSeconds, double betaSecondsPerByte)
    : alpha_(alphaSeconds), beta_(betaSecondsPerByte) {
  IMERGE_CHECK(std::isfinite(alpha_) && alpha_ >= 0, "LinearCommModel: startup ", alpha_,
               " s must be finite and not negative");
  IMERGE_CHECK(std::isfinite(beta_) && beta_ >= 0, "LinearCommModel: ", beta_,
               " s per byte must be finite and not negative");
}

double LinearCommModel::seconds(size_t bytes, int workers) const {
  checkWorkers(workers, "LinearCommModel");
  return alpha_ + beta_ * static_cast<double>(bytes);
}

std::string LinearCommModel::describe() const {
  if (beta_ == 0) return "linear: " + readableSeconds(alpha_) + " at any size";
  return "linear: " + readableSeconds(alpha_) + " + M / " + readableBandwidth(1 / beta_);
}

std::vector<CommPiece> LinearCommModel::piecesAt(int workers) const {
  checkWorkers(workers, "LinearCommModel");
  return {{0, alpha_, beta_}};
}

// ---- PiecewiseCommModel ----

PiecewiseCommModel::PiecewiseCommModel(double flatSeconds, std::vector<Segment> segments)
    : flatSeconds_(flatSeconds), segments_(std::move(segments)) {
  IMERGE_CHECK(std::isfinite(flatSeconds_) && flatSeconds_ >= 0, "PiecewiseCommModel: flat cost ",
               flatSeconds_, " s must be finite and not negative");
  for (size_t i = 0; i < segments_.size(); ++i) {
    const Segment& segment = segments_[i];
    IMERGE_CHECK(segment.startBytes > (i == 0 ? 0 : segments_[i - 1].startBytes),
                 "PiecewiseCommModel: segment ", i, " starts at ", segment.startBytes,
                 " bytes; segments must start above 0 bytes and in increasing order");
    IMERGE_CHECK(std::isfinite(segment.slopeSecondsPerByte) && segment.slopeSecondsPerByte >= 0,
                 "PiecewiseCommModel: segment ", i, " has slope ", segment.slopeSecondsPerByte,
                 " s per byte; it must be finite and not negative");
    const double atStart = segment.interceptSeconds +
                           segment.slopeSecondsPerByte * static_cast<double>(segment.startBytes);
    IMERGE_CHECK(std::isfinite(segment.interceptSeconds) && atStart >= 0,
                 "PiecewiseCommModel: segment ", i, " costs ", atStart, " s at its start (",
                 segment.startBytes, " bytes); costs must not be negative");
  }
}

double PiecewiseCommModel::seconds(size_t bytes, int workers) const {
  checkWorkers(workers, "PiecewiseCommModel");
  // Few segments: a backward scan finds the last one that starts at or below `bytes`.
  for (size_t i = segments_.size(); i-- > 0;) {
    if (bytes >= segments_[i].startBytes) {
      return segments_[i].interceptSeconds +
             segments_[i].slopeSecondsPerByte * static_cast<double>(bytes);
    }
  }
  return flatSeconds_;
}

std::vector<CommPiece> PiecewiseCommModel::piecesAt(int workers) const {
  checkWorkers(workers, "PiecewiseCommModel");
  std::vector<CommPiece> pieces = {{0, flatSeconds_, 0}};
  for (const Segment& segment : segments_) {
    // The segment's cost at its first byte (the constructor checked it is not negative).
    const double atStart = segment.interceptSeconds +
                           segment.slopeSecondsPerByte * static_cast<double>(segment.startBytes);
    pieces.push_back({segment.startBytes, atStart, segment.slopeSecondsPerByte});
  }
  return pieces;
}

std::string PiecewiseCommModel::describe() const {
  if (segments_.empty()) return "piecewise: " + readableSeconds(flatSeconds_) + " at any size";
  std::string text = "piecewise: " + readableSeconds(flatSeconds_) + " below " +
                     readableBytes(segments_.front().startBytes);
  for (const Segment& segment : segments_) {
    text += "; " + readableSeconds(segment.interceptSeconds);
    if (segment.slopeSecondsPerByte > 0) {
      text += " + M / " + readableBandwidth(1 / segment.slopeSecondsPerByte);
    }
    text += " from " + readableBytes(segment.startBytes);
  }
  return text;
}

std::vector<size_t> PiecewiseCommModel::breakpointBytes() const {
  std::vector<size_t> breakpoints;
  for (const Segment& segment : segments_) breakpoints.push_back(segment.startBytes);
  return breakpoints;
}

// ---- fitting ----

LinearCommModel fitLinear(const std::vector<CommSample>& samples) {
  checkSamples(samples, "fitLinear");
  WeightedMoments moments;
  for (const CommSample& sample : samples) {
    moments.add(static_cast<double>(sample.bytes), sample.seconds, 1.0);
  }
  IMERGE_CHECK(moments.hasSpread(), "fitLinear: all ", samples.size(), " samples are of one size (",
               samples.front().bytes, " bytes); a line needs two sizes or more");
  const double slope = moments.slope();
  const double intercept = moments.meanY() - slope * moments.meanX();
  if (intercept >= 0 && slope >= 0) return LinearCommModel(intercept, slope);

  // The constrained optimum lies on a boundary: a line through the origin, or a constant.
  double sumXY = 0;
  double sumXX = 0;
  for (const CommSample& sample : samples) {
    const double x = static_cast<double>(sample.bytes);
    sumXY += x * sample.seconds;
    sumXX += x * x;
  }
  const double throughOriginSlope = sumXX > 0 ? std::max(0.0, sumXY / sumXX) : 0.0;
  const double constant = std::max(0.0, moments.meanY());
  if (sumSquaredError(samples, 0, throughOriginSlope) < sumSquaredError(samples, constant, 0)) {
    return LinearCommModel(0, throughOriginSlope);
  }
  return LinearCommModel(constant, 0);
}

PiecewiseCommModel fitPiecewise(const std::vector<CommSample>& samples, int maxSegments) {
  checkSamples(samples, "fitPiecewise");
  IMERGE_CHECK(maxSegments >= 2, "fitPiecewise: maxSegments is ", maxSegments,
               "; it counts the flat segment, so at least 2 are needed for one linear segment");
  const auto sizes = groupBySize(samples);
  const size_t sizeCount = sizes.size();
  IMERGE_CHECK(sizeCount >= 3, "fitPiecewise: the samples have ", sizeCount,
               " distinct sizes; a flat segment and a line need at least 3");

  // Relative error (fit - y) / y is a weighted absolute error with weight 1 / y^2.
  auto addSize = [&](WeightedMoments& moments, size_t sizeIndex) {
    for (double seconds : sizes[sizeIndex].second) {
      moments.add(static_cast<double>(sizes[sizeIndex].first), seconds, 1 / (seconds * seconds));
    }
  };

  // flatFit[j]: the best constant over sizes 0..j. lineFit[i][j]: the best line over sizes i..j
  // (j > i), its slope clamped at 0 and its value at size i kept non-negative.
  std::vector<Line> flatFit(sizeCount);
  {
    WeightedMoments moments;
    for (size_t j = 0; j < sizeCount; ++j) {
      addSize(moments, j);
      flatFit[j] = {moments.meanY(), 0, moments.constantError()};
    }
  }
  std::vector<std::vector<Line>> lineFit(sizeCount, std::vector<Line>(sizeCount));
  for (size_t i = 1; i < sizeCount; ++i) {
    WeightedMoments moments;
    addSize(moments, i);
    for (size_t j = i + 1; j < sizeCount; ++j) {
      addSize(moments, j);
      const double slope = moments.slope();  // two distinct sizes: the spread is positive
      const double intercept = moments.meanY() - slope * moments.meanX();
      const bool usable =
          slope >= 0 && intercept + slope * static_cast<double>(sizes[i].first) >= 0;
      lineFit[i][j] = usable ? Line{intercept, slope, moments.lineError()}
                             : Line{moments.meanY(), 0, moments.constantError()};
    }
  }

  // error[s][j]: the least error covering sizes 0..j with a flat segment and s linear ones;
  // start[s][j]: where the last of those linear segments begins.
  const size_t maxLinear = std::min<size_t>(maxSegments - 1, (sizeCount - 1) / 2);
  const double infinity = std::numeric_limits<double>::infinity();
  std::vector<std::vector<double>> error(maxLinear + 1, std::vector<double>(sizeCount, infinity));
  std::vector<std::vector<size_t>> start(maxLinear + 1, std::vector<size_t>(sizeCount, 0));
  for (size_t j = 0; j < sizeCount; ++j) error[0][j] = flatFit[j].squaredError;
  for (size_t s = 1; s <= maxLinear; ++s) {
    // The last linear segment covers i..j (two sizes or more); what precedes it needs
    // 1 + 2(s-1) sizes, so i >= 2s - 1.
    for (size_t j = 2 * s; j < sizeCount; ++j) {
      for (size_t i = 2 * s - 1; i + 1 <= j; ++i) {
        const double candidate = error[s - 1][i - 1] + lineFit[i][j].squaredError;
        if (candidate < error[s][j]) {
          error[s][j] = candidate;
          start[s][j] = i;
        }
      }
    }
  }
  // The segment count with the least error; a tie goes to fewer segments. "Tie" allows for
  // rounding: on samples that two segments fit exactly, a third can fit them exactly too (both
  // errors are rounding residue) with a segment bridging a knee between two sampled sizes, which
  // charges every message between them wrongly. The errors are sums of squared relative misses,
  // so 1e-9 is a 0.003% miss on a single sample.
  constexpr double kMeaningfulError = 1e-9;
  size_t bestLinear = 1;
  for (size_t s = 2; s <= maxLinear; ++s) {
    if (error[s][sizeCount - 1] < error[bestLinear][sizeCount - 1] - kMeaningfulError) {
      bestLinear = s;
    }
  }

  std::vector<PiecewiseCommModel::Segment> segments(bestLinear);
  size_t end = sizeCount - 1;
  for (size_t s = bestLinear; s >= 1; --s) {
    const size_t begin = start[s][end];
    const Line& line = lineFit[begin][end];
    segments[s - 1] = {sizes[begin].first, line.intercept, line.slope};
    end = begin - 1;
  }
  return PiecewiseCommModel(flatFit[end].intercept, std::move(segments));
}

double fitError(const CommModel& model, const std::vector<CommSample>& samples) {
  IMERGE_CHECK(!samples.empty(), "fitError: no samples");
  double sumSquares = 0;
  for (size_t i = 0; i < samples.size(); ++i) {
    const CommSample& sample = samples[i];
    IMERGE_CHECK(std::isfinite(sample.seconds) && sample.seconds > 0, "fitError: sample ", i, " (",
                 sample.bytes, " bytes) has time ", sample.seconds,
                 " s; relative errors need positive times");
    const double relative =
        (model.seconds(sample.bytes, sample.workers) - sample.seconds) / sample.seconds;
    sumSquares += relative * relative;
  }
  return std::sqrt(sumSquares / static_cast<double>(samples.size()));
}

// ---- CSV ----

std::vector<CommSample> readCommSamplesCsv(const std::string& path) {
  std::ifstream file = openTableFile(path, "communication samples CSV");
  const CsvTable table(file, path, {"bytes", "seconds"}, "samples");
  std::vector<CommSample> samples;
  for (const CsvTable::Row& row : table.rows()) {
    const std::string where = table.where(row.line);
    CommSample sample;
    sample.bytes = parseWholeNumber(table.text(row, "bytes"), where, "bytes");
    IMERGE_CHECK(sample.bytes > 0, where,
                 ": field 'bytes' is 0; an all-reduce of zero bytes is not a sample");
    sample.seconds = table.number(row, "seconds");
    IMERGE_CHECK(sample.seconds > 0, where,
                 ": field 'seconds' is 0; a measured all-reduce takes some time");
    sample.workers = 1;
    if (table.has("workers")) {
      const size_t workers = parseWholeNumber(table.text(row, "workers"), where, "workers");
      IMERGE_CHECK(workers >= 1 && workers <= 1u << 30, where, ": field 'workers' is ",
                   table.text(row, "workers"), "; it must be at least 1");
      sample.workers = static_cast<int>(workers);
    }
    samples.push_back(sample);
  }
  return samples;
}

void writeCommSamplesCsv(const std::string& path, const std::vector<CommSample>& samples) {
  std::ofstream file(path);
  IMERGE_CHECK(file.is_open(), path, ": cannot open for writing the communication samples CSV");
  file << "bytes,workers,seconds\n";
  char seconds[64];
  for (const CommSample& sample : samples) {
    std::snprintf(seconds, sizeof seconds, "%.17g", sample.seconds);
    file << sample.bytes << ',' << sample.workers << ',' << seconds << '\n';
  }
  file.flush();
  IMERGE_CHECK(file.good(), path, ": writing the communication samples CSV failed");
}

}  // namespace imerge::distributed
