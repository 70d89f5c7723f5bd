// Broadcasting elementwise kernels on the CPU and their backward's reduction, over contiguous
// float32 tensors (core/broadcast.h has the rules). The ops call these only when the shapes
// differ: equal shapes take core/cpu/elementwise.h's plain loops.
#pragma once

#include "core/kernel_params.h"
#include "core/tensor.h"

namespace imerge::cpu {

// a, b float32 whose shapes broadcast -> op(a, b) of the broadcast shape. Throws imerge::Error
// naming the op ("add", "sub", "mul") and both shapes when they do not broadcast.
Tensor broadcastBinary(BinaryOp op, const Tensor& a, const Tensor& b);

// input float32 of shape S, `shape` broadcasting to S -> sum over the dimensions broadcasting
// stretched (missing leading ones, and those of size 1 in `shape`), of `shape`. Accumulates in
// double, serially: the sums run in a fixed order whatever the thread count.
Tensor sumToShape(const Tensor& input, const Shape& shape);

}  // namespace imerge::cpu
