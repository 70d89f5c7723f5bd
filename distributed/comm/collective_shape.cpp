#include "distributed/comm/collective_shape.h"

#include <algorithm>
#include <cstring>

namespace imerge::distributed {

const char* collectiveName(CollectiveOperation operation) {
  static constexpr const char* kNames[] = {
      "all-reduce", "all-reduce (max)", "all-reduce (bitwise and)", "broadcast",
      "all-gather", "barrier",          "reduce-scatter",           "all-gather (blocks)"};
  return kNames[static_cast<int>(operation)];
}

CollectiveShape CollectiveShape::of(CollectiveOperation operation, size_t count,
                                    size_t elementBytes, int root, const std::string& label) {
  CollectiveShape shape{
      operation, static_cast<int64_t>(count), static_cast<int64_t>(elementBytes), root, {}};
  label.copy(shape.label, sizeof shape.label - 1);
  return shape;
}

bool CollectiveShape::sameCollective(const CollectiveShape& other) const {
  return operation == other.operation && count == other.count &&
         elementBytes == other.elementBytes && root == other.root;
}

std::string CollectiveShape::describe() const {
  std::string text = collectiveName(operation);
  if (operation != CollectiveOperation::Barrier) {
    text += " of " + std::to_string(count) + " x " + std::to_string(elementBytes) + " bytes";
  }
  if (operation == CollectiveOperation::Broadcast) text += " from rank " + std::to_string(root);
  // The label arrived as bytes from another rank: read at most its field.
  return text + " ('" + std::string(label, strnlen(label, sizeof label)) + "')";
}

std::string describeShapeDisagreement(const std::vector<CollectiveShape>& perRank) {
  if (perRank.empty() ||
      std::all_of(perRank.begin(), perRank.end(), [&](const CollectiveShape& shape) {
        return shape.sameCollective(perRank.front());
      })) {
    return "";
  }
  std::string ranks;
  for (size_t rank = 0; rank < perRank.size(); ++rank) {
    ranks +=
        (rank ? "; rank " : "rank ") + std::to_string(rank) + " posts " + perRank[rank].describe();
  }
  return "the ranks posted different collectives: " + ranks +
         ". Every rank must post the same collectives in the same order with the same sizes; "
         "ranks that read different data or run different code or flags do not. Nothing was "
         "sent: the check runs before each collective";
}

}  // namespace imerge::distributed
