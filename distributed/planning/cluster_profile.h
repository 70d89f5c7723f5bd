// Cluster profiles: the all-reduce cost of a cluster at every worker count, from published
// tables (MG-WFBP's per-cluster a + bM constants, the IMerge paper's small-message costs) or
// from a model measured at one worker count, so the simulator can charge 4 to 64 workers that
// this machine does not have.
//
// The worker-count rule (ring all-reduce, Patarasuk & Yuan; what NCCL and Open MPI's large-
// message all-reduce do): among p workers an all-reduce of M bytes makes 2(p-1) steps, each
// paying one startup and moving M/p bytes, so
//   T_p(M) = 2(p-1) * startup + 2(p-1)/p * M / bandwidth:
// the latency term grows with (p-1) and the bandwidth term with (p-1)/p. A model measured at
// p0 workers is carried to p by scaling its latency part by (p-1)/(p0-1) and its bandwidth
// part by ((p-1)/p) / ((p0-1)/p0). Where the latency part ends is a model's own shape: a
// linear model's startup is its a; a piecewise model's flat cost is all latency, and each of
// its segments counts its cost at its first byte as latency and only the growth above it as
// bandwidth (so a scaled segment never costs less than nothing). The published tables do not
// follow the rule exactly (MG-WFBP's 10GbE a grows 200-fold from 2 to 8 workers), which is why
// a profile keeps every measured count as measured and scales only from the nearest one.
#pragma once

#include <cstddef>
#include <istream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "distributed/planning/comm_model.h"

namespace imerge::distributed {

// A model measured at one worker count, carried to any other by the ring rule above. Built by
// scaledToWorkers(); seconds(bytes, workers) applies the rule for `workers` (at the measured
// count it is the measured model, up to rounding; at 1 worker every all-reduce is free).
class RingScaledCommModel : public CommModel {
 public:
  // The measured curve's pieces (CommPiece), as they are at measuredWorkers.
  using Piece = CommPiece;

  RingScaledCommModel(int measuredWorkers, std::vector<Piece> pieces, std::string measuredText);
  double seconds(size_t bytes, int workers) const override;
  // "ring-scaled from 8 workers: linear: 523 us + M / 1.17 GB/s"
  std::string describe() const override;
  // The pieces with their latency and slope carried to `workers` by the ring rule.
  std::vector<CommPiece> piecesAt(int workers) const override;

  int measuredWorkers() const { return measuredWorkers_; }
  const std::vector<Piece>& pieces() const { return pieces_; }

  // The factors of the rule for carrying p0 workers to p (both 1 at p == p0, both 0 at p == 1).
  static double latencyFactor(int measuredWorkers, int workers);
  static double bandwidthFactor(int measuredWorkers, int workers);

 private:
  int measuredWorkers_;
  std::vector<Piece> pieces_;
  std::string measuredText_;
};

// `model` (a LinearCommModel, a PiecewiseCommModel or a RingScaledCommModel) measured among
// measuredWorkers (at least 2: one worker communicates nothing, so it says nothing about the
// network) as a model of every worker count. Throws imerge::Error for other model types,
// naming the model.
std::unique_ptr<RingScaledCommModel> scaledToWorkers(const CommModel& model, int measuredWorkers);

// The cost at every worker count: the model measured at a count the profile has, and otherwise
// the model of the nearest measured count (nearest in log(workers), a tie going to the larger
// count, whose startup is the more pessimistic) scaled by the ring rule.
class ClusterProfile : public CommModel {
 public:
  // name: what describe() and error messages call it ("10GbE"). modelsByWorkers: at least one,
  // every count at least 2, every model one that scaledToWorkers accepts.
  ClusterProfile(std::string name, std::map<int, std::shared_ptr<const CommModel>> modelsByWorkers);

  double seconds(size_t bytes, int workers) const override;
  // "cluster 10GbE: 2 workers: linear: ...; 4 workers: ...; other counts ring-scaled from the
  // nearest"
  std::string describe() const override;
  std::vector<CommPiece> piecesAt(int workers) const override;  // modelFor(workers)'s

  const std::string& name() const { return name_; }
  std::vector<int> measuredWorkerCounts() const;
  // The measured count `workers` is charged from.
  int nearestMeasuredWorkers(int workers) const;
  // A model of exactly this count: the measured one, or the nearest one scaled; its seconds()
  // must then be asked for `workers` workers.
  const CommModel& modelFor(int workers) const;

 private:
  struct Measured {
    std::shared_ptr<const CommModel> model;
    std::shared_ptr<const RingScaledCommModel> scaled;
  };
  std::string name_;
  std::map<int, Measured> measured_;
};

// `profile` on a network whose every startup (each piece's latency) is startupScale times as
// long and whose bandwidth is bandwidthScale times as high (slopes divided by it), at each of its
// measured counts; other counts follow by the ring rule as before. Both scales finite and above
// 0. What a sweep over "a faster switch" or "a slower NIC" charges.
ClusterProfile withScaledCosts(const ClusterProfile& profile, double startupScale,
                               double bandwidthScale);

// ---- published tables ----------------------------------------------------------------------
//
// Both readers skip blank lines and lines starting with #, and refuse, with an imerge::Error
// naming the file (or "built-in NAME"), the line and the field: a missing column, a line with
// the wrong number of fields, a non-numeric, negative or non-finite value, a worker count below
// 2, a row that repeats an earlier one's key, a table without rows.

// network,workers,a_seconds,b_seconds_per_byte (MG-WFBP's T(M) = a + bM per cluster and worker
// count, tests/reference/published/mgwfbp_alpha_beta.csv): one profile of linear models per
// network. Within a network the startup a must not decrease as workers grow (more workers never
// start faster; the bandwidth term b is published non-monotone, 10GbE's 16 workers below its 8, and
// is taken as published).
std::map<std::string, ClusterProfile> readAlphaBetaProfiles(const std::string& path);
std::map<std::string, ClusterProfile> parseAlphaBetaProfiles(std::istream& text,
                                                             const std::string& source);
// One network of that table; an unknown network is refused listing those the table has.
ClusterProfile readAlphaBetaProfile(const std::string& path, const std::string& network);

// The flat cost of a small all-reduce per worker count.
struct SmallMessageCosts {
  std::map<int, double> flatSecondsByWorkers;
  size_t largestBytes = 0;  // the largest message the table lists, in bytes
};
// nodes,message_elems,time (the IMerge paper's small-message costs,
// tests/reference/published/imerge_comm_small_messages.csv): elements are float32 (4 bytes) and
// time is in milliseconds, as the file's header says the pattern fits. For each node count the time
// must not decrease as the message grows (the rows may come in any order); the flat cost is the
// time of the largest message listed, because below the breakpoint a message pays its startup
// and the largest small message measured bounds what any of them pays.
SmallMessageCosts readSmallMessageCosts(const std::string& path);
SmallMessageCosts parseSmallMessageCosts(std::istream& text, const std::string& source);

// The paper's cost shape at each count of `large`: the small-message flat cost below
// breakpointBytes, and `large`'s model (linear or piecewise, as measured at that count) from
// breakpointBytes on. A count `small` lacks takes the flat cost of small's nearest count (in
// log(workers)) scaled by the ring rule's latency factor.
ClusterProfile combineSmallAndLargeMessages(const std::string& name, const SmallMessageCosts& small,
                                            const ClusterProfile& large, size_t breakpointBytes);

// The breakpoint of the IMerge paper's model: 32768 float32 elements.
inline constexpr size_t kPaperBreakpointBytes = 32768 * 4;

// The published tables compiled in (the same text as
// tests/reference/published/mgwfbp_alpha_beta.csv and imerge_comm_small_messages.csv, parsed by the
// same readers; a test checks they agree), so that the built-in clusters of cluster_catalog.h need
// no files.
std::map<std::string, ClusterProfile> builtInAlphaBetaProfiles();
SmallMessageCosts builtInSmallMessageCosts();

}  // namespace imerge::distributed
