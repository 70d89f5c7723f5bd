// The start-up check that every rank of a data-parallel run reads the same dataset. The sizes
// of the splits decide how many steps and evaluation batches a rank runs, so ranks whose copies
// differ (one node's copy incomplete) would post different sequences of collectives, and MPI
// would match an all-reduce of one rank with another collective of another, with undefined
// results (Open MPI: MPI_ERR_TRUNCATE, then a crash). Compared before the first step instead:
//
//   the ranks read different datasets: rank 1 reads 40 training images from B, rank 0 reads 64
//   from A; every rank must read the same dataset (...)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "distributed/comm/communicator.h"

namespace imerge::training {

// What shapes a rank's sequence of collectives, and where its data came from.
struct DatasetFigures {
  int64_t trainImages = 0;
  int64_t testImages = 0;
  int64_t stepsPerEpoch = 0;
  int64_t evaluationSteps = 0;
  int64_t classes = 0;
  Shape imageShape;
  std::string source;  // the folder read, or the generator of synthetic data

  std::string encode() const;
  static DatasetFigures decode(const std::string& text);
};

// "" when every rank's figures are equal; else the message above, one clause per figure that
// differs, naming each rank's value and source (ranks with equal values grouped).
std::string describeDatasetDisagreement(const std::vector<DatasetFigures>& perRank);

// Gathers every rank's figures and throws distributed::RanksDisagree, on every rank alike, when
// they differ. A collective: every rank calls it once, before training.
void requireSameDatasetOnEveryRank(distributed::Communicator& communicator,
                                   const DatasetFigures& mine);

}  // namespace imerge::training
