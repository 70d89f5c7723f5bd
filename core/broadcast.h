// NumPy and PyTorch broadcasting of two shapes: align the trailing dimensions, a dimension of
// size 1 stretches to the other's size, and missing leading dimensions count as size 1.
//
//   [4, 1, 3] with [5, 1] -> [4, 5, 3]
//
// Plain shape arithmetic shared by the ops (autograd/ops/elementwise.cpp, which decides
// between the same-shape fast path and the broadcasting kernels) and every device's kernels.
#pragma once

#include <cstdint>
#include <vector>

#include "core/shape.h"

namespace imerge {

// The broadcast shape of `a` and `b`. Throws imerge::Error naming `op` in PyTorch's words when
// they do not broadcast: "add: the size of tensor a (3) must match the size of tensor b (4) at
// non-singleton dimension 1 (shapes [2, 3] and [4])", the dimension counted in the result.
Shape broadcastShapes(const char* op, const Shape& a, const Shape& b);

// Whether `shape` broadcasts to `target` unchanged (target is the broadcast of the two).
bool broadcastsTo(const Shape& shape, const Shape& target);

// The element strides of a contiguous tensor of `shape`, read as a tensor of `target`
// (broadcastsTo(shape, target) must hold): one stride per dimension of `target`, 0 where
// `shape` is missing the dimension or has size 1, so that element (i_0, ..., i_k) of the
// broadcast view is at sum(i_d * stride_d).
std::vector<int64_t> broadcastStrides(const Shape& shape, const Shape& target);

}  // namespace imerge
