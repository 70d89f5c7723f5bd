// What one rank is about to post, as the MPI communicator's shape check compares it across
// ranks before every collective (MpiOptions::checkCollectiveShapes): the operation, the element
// count and size, the root, and the task's label for the message. Plain bytes, sent as they are
// by MPI_Iallgather. The comparison and the message need no MPI, and are tested without it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace imerge::distributed {

enum class CollectiveOperation : int64_t {
  AllreduceSum,
  AllreduceMax,
  AllreduceBitwiseAnd,
  Broadcast,
  Allgather,
  Barrier,
  ReduceScatterSum,
  AllgatherBlocks
};

// "all-reduce", "broadcast", ... as messages name them.
const char* collectiveName(CollectiveOperation operation);

struct CollectiveShape {
  CollectiveOperation operation;
  int64_t count;
  int64_t elementBytes;
  int64_t root;
  char label[48];  // the task's label, cut short; not compared

  // `label` is cut to fit.
  static CollectiveShape of(CollectiveOperation operation, size_t count, size_t elementBytes,
                            int root, const std::string& label);
  bool sameCollective(const CollectiveShape& other) const;
  // "all-reduce of 100 x 4 bytes ('bucket 3')", "broadcast of 8 x 1 bytes from rank 0 (...)".
  std::string describe() const;
};

// "" when every rank's shape (indexed by rank) is the same collective; else the error naming
// each rank's collective.
std::string describeShapeDisagreement(const std::vector<CollectiveShape>& perRank);

}  // namespace imerge::distributed
