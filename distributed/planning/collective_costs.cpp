// Costs of the split collectives (contract in collective_costs.h).
#include "distributed/planning/collective_costs.h"

#include <cmath>

#include "core/error.h"

namespace imerge::distributed {

ScaledCommModel::ScaledCommModel(std::shared_ptr<const CommModel> base, double factor,
                                 std::string label)
    : base_(std::move(base)), factor_(factor), label_(std::move(label)) {
  IMERGE_CHECK(base_ != nullptr, "ScaledCommModel: no model to scale");
  IMERGE_CHECK(std::isfinite(factor_) && factor_ > 0, "ScaledCommModel: the factor ", factor_,
               " must be finite and above 0");
}

double ScaledCommModel::seconds(size_t bytes, int workers) const {
  return factor_ * base_->seconds(bytes, workers);
}

std::string ScaledCommModel::describe() const {
  return label_ + " (" + base_->describe() + ")";
}

std::vector<CommPiece> ScaledCommModel::piecesAt(int workers) const {
  std::vector<CommPiece> pieces = base_->piecesAt(workers);
  for (CommPiece& piece : pieces) {
    piece.latencySeconds *= factor_;
    piece.slopeSecondsPerByte *= factor_;
  }
  return pieces;
}

CollectiveCosts ringSplitCosts(std::shared_ptr<const CommModel> allReduce) {
  IMERGE_CHECK(allReduce != nullptr, "ringSplitCosts: no all-reduce model");
  auto half = std::make_shared<ScaledCommModel>(allReduce, 0.5, "half of the all-reduce");
  return {std::move(allReduce), half, half};
}

}  // namespace imerge::distributed
