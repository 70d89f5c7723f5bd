// Communication models: how long an all-reduce of M bytes takes among `workers` workers.
//
// A planner plans with the model it believes (MG-WFBP: a least-squares line a + bM; IMerge: the
// piecewise model with a flat startup below a size breakpoint); the simulator charges the
// measured truth. Both are CommModels, built from the same measured samples.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace imerge::distributed {

// One piece of a cost curve: from startBytes on (up to the next piece's startBytes),
// T(M) = latencySeconds + slopeSecondsPerByte * (M - startBytes).
struct CommPiece {
  size_t startBytes = 0;
  double latencySeconds = 0;
  double slopeSecondsPerByte = 0;
};

class CommModel {
 public:
  virtual ~CommModel() = default;
  virtual double seconds(size_t bytes, int workers) const = 0;
  virtual std::string describe() const = 0;  // "linear: 12.1 us + M / 5.3 GB/s"
  // The curve at `workers` as pieces in increasing startBytes, the first at 0, so that
  // seconds(M, workers) is the last piece starting at or below M evaluated at M. Every model
  // states its shape this way: code that needs the shape (scaling to other worker counts,
  // combining tables, a planner's startup cost) asks for it instead of casting to a type.
  virtual std::vector<CommPiece> piecesAt(int workers) const = 0;
};

// One measured all-reduce: `bytes` among `workers` took `seconds` (a median over repetitions).
struct CommSample {
  size_t bytes = 0;
  int workers = 0;
  double seconds = 0;
};

// ---- concrete models ---------------------------------------------------------------------
//
// For now every model describes one worker count: the samples a model is fitted from must all
// share one `workers`, and seconds() only checks that `workers` is at least 1 and otherwise
// ignores it (scaling with the worker count comes with a later model).

// T(M) = alpha + beta * M: the traditional all-reduce model MG-WFBP plans with.
class LinearCommModel : public CommModel {
 public:
  // alphaSeconds: the startup cost; betaSecondsPerByte: the inverse bandwidth. Both finite and
  // not negative.
  LinearCommModel(double alphaSeconds, double betaSecondsPerByte);
  double seconds(size_t bytes, int workers) const override;
  std::string describe() const override;                        // "linear: 12.1 us + M / 5.30 GB/s"
  std::vector<CommPiece> piecesAt(int workers) const override;  // one piece

  double alphaSeconds() const { return alpha_; }
  double betaSecondsPerByte() const { return beta_; }

 private:
  double alpha_;
  double beta_;
};

// The measured shape: flat below a size breakpoint (small messages cost one startup whatever
// their size), then linear segments, each covering [startBytes, next segment's startBytes):
//   T(M) = flatSeconds                              for M < segments[0].startBytes
//   T(M) = segment.interceptSeconds + segment.slopeSecondsPerByte * M   in a segment's range
// The model is deliberately NOT continuous at the breakpoints: measured costs jump where MPI
// switches algorithms or NCCL switches protocols (e.g. 67 us at 8 KB, 126 us at 12 KB), and a
// continuous fit would smear each step over the segments next to it.
class PiecewiseCommModel : public CommModel {
 public:
  struct Segment {
    size_t startBytes = 0;
    double interceptSeconds = 0;  // the line's value at M = 0 (may be negative: only its range
                                  // counts, where the constructor checks it is not negative)
    double slopeSecondsPerByte = 0;
  };

  // Segments in increasing startBytes, the first above 0 bytes, slopes not negative and each line
  // not negative at its startBytes; no segments means flat at every size.
  PiecewiseCommModel(double flatSeconds, std::vector<Segment> segments);
  double seconds(size_t bytes, int workers) const override;
  // "piecewise: 30.0 us below 8 KiB; 40.0 us + M / 1.20 GB/s from 8 KiB; ..."
  std::string describe() const override;
  // The flat piece at 0, then one per segment.
  std::vector<CommPiece> piecesAt(int workers) const override;

  double flatSeconds() const { return flatSeconds_; }
  const std::vector<Segment>& segments() const { return segments_; }
  // The segments' startBytes: where the cost changes its rule.
  std::vector<size_t> breakpointBytes() const;

 private:
  double flatSeconds_;
  std::vector<Segment> segments_;
};

// Least squares on absolute times (as MG-WFBP fits its a and b), constrained to alpha >= 0 and
// beta >= 0 so that small messages never get a negative cost: when the unconstrained line
// breaks a constraint the best line on the constraint's boundary is taken. Needs samples at two
// or more distinct sizes, all of one worker count; throws imerge::Error otherwise.
LinearCommModel fitLinear(const std::vector<CommSample>& samples);

// Fits a flat segment and then up to maxSegments - 1 linear segments (maxSegments counts the
// flat one; at least 2) minimizing the sum of squared RELATIVE errors, so that a 30 us message
// weighs as much as a 30 ms one. Breakpoints lie on measured sizes: a segment starts at the
// smallest size it covers, so a knee between two measured sizes is placed at the upper one.
// The search is exact: dynamic programming over the sorted distinct sizes and the number of
// segments, each linear segment covering at least two distinct sizes (a weighted least-squares
// line, its slope clamped at 0). It uses as many segments as the data admits, up to
// maxSegments: an extra breakpoint never raises the error, and on data with fewer knees it
// only splits a line into two near-identical ones. Needs at least 3 distinct sizes (one flat,
// two for a line), positive times and one worker count; throws imerge::Error otherwise.
PiecewiseCommModel fitPiecewise(const std::vector<CommSample>& samples, int maxSegments = 3);

// Root mean square of (model - measured) / measured over the samples.
double fitError(const CommModel& model, const std::vector<CommSample>& samples);

// CSV of samples: a header line with at least the columns `bytes` and `seconds` (`workers` is
// optional, default 1; other columns are ignored; blank lines and lines starting with # are
// skipped), then one sample per line. Refuses, with an imerge::Error naming the file, the line
// and the field: a missing column, a non-numeric or negative value, zero bytes, zero seconds,
// fewer than one worker, a line with the wrong number of fields, a file without samples.
std::vector<CommSample> readCommSamplesCsv(const std::string& path);
// Writes "bytes,workers,seconds" with every digit needed to read the same doubles back.
void writeCommSamplesCsv(const std::string& path, const std::vector<CommSample>& samples);

}  // namespace imerge::distributed
