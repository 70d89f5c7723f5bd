// What each collective a plan issues costs: the all-reduce of every strategy, and the
// reduce-scatter and all-gather an `imerge-overlap` split bucket issues instead (plan.h).
//
// Where the split costs come from: measured (imerge-commbench's reduce-scatter and all-gather
// sweeps), or, where only all-reduce was measured or published, the ring rule of
// cluster_profile.h: a ring all-reduce among p workers is a reduce-scatter of (p-1) steps followed
// by an all-gather of (p-1) steps, each step paying one startup and moving M/p bytes, so each
// half costs exactly half the all-reduce. That is what NCCL's and Open MPI's ring algorithms do;
// an implementation whose separate collectives pay a fixed launch cost each is better described
// by measuring them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "distributed/planning/comm_model.h"

namespace imerge::distributed {

struct CollectiveCosts {
  std::shared_ptr<const CommModel> allReduce;
  std::shared_ptr<const CommModel> reduceScatter;  // of the whole bucket's M bytes
  std::shared_ptr<const CommModel> allGather;      // of the whole bucket's M bytes
};

// `base` with every cost multiplied by `factor` (finite, above 0).
class ScaledCommModel final : public CommModel {
 public:
  ScaledCommModel(std::shared_ptr<const CommModel> base, double factor, std::string label);
  double seconds(size_t bytes, int workers) const override;
  std::string describe() const override;  // "half of (piecewise: ...)"
  std::vector<CommPiece> piecesAt(int workers) const override;

 private:
  std::shared_ptr<const CommModel> base_;
  double factor_;
  std::string label_;
};

// The ring rule's costs from an all-reduce model: reduce-scatter and all-gather each half of it.
CollectiveCosts ringSplitCosts(std::shared_ptr<const CommModel> allReduce);

}  // namespace imerge::distributed
