#include "core/broadcast.h"

#include <algorithm>

#include "core/error.h"

namespace imerge {

Shape broadcastShapes(const char* op, const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape result(rank);
  // From the last dimension, as PyTorch, so the first mismatch reported is the same as its.
  for (size_t d = rank; d-- > 0;) {
    // Dimension d of the result is dimension d - (rank - size) of each operand, if it has one.
    const size_t fromEnd = rank - d;
    const int64_t sizeA = fromEnd <= a.size() ? a[a.size() - fromEnd] : 1;
    const int64_t sizeB = fromEnd <= b.size() ? b[b.size() - fromEnd] : 1;
    IMERGE_CHECK(sizeA == sizeB || sizeA == 1 || sizeB == 1, op, ": the size of tensor a (", sizeA,
                 ") must match the size of tensor b (", sizeB, ") at non-singleton dimension ", d,
                 " (shapes ", shapeToString(a), " and ", shapeToString(b), ")");
    result[d] = sizeA == 1 ? sizeB : sizeA;
  }
  return result;
}

bool broadcastsTo(const Shape& shape, const Shape& target) {
  if (shape.size() > target.size()) return false;
  const size_t offset = target.size() - shape.size();
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] != 1 && shape[d] != target[offset + d]) return false;
  }
  return true;
}

std::vector<int64_t> broadcastStrides(const Shape& shape, const Shape& target) {
  std::vector<int64_t> strides(target.size(), 0);
  const size_t offset = target.size() - shape.size();
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    // A size-1 dimension repeats its one element: stride 0, as a missing one.
    strides[offset + d] = shape[d] == 1 ? 0 : stride;
    stride *= shape[d];
  }
  return strides;
}

}  // namespace imerge
