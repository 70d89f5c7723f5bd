// Inverted dropout on the CPU.
//
// Contract:
//   mask   [any shape] float32, each element 0 with probability p, else 1/(1-p)
//   output [same]      input * mask; the backward is gradOutput * mask with the same mask
//
// The mask is drawn serially from one Generator, element by element in row-major order, so a
// given seed gives the same mask whatever the thread count. Scaling the survivors at training
// time keeps every activation's expectation unchanged, so evaluation is the identity.
#pragma once

#include "core/random.h"
#include "core/tensor.h"

namespace imerge::cpu {

// p in [0, 1]; p = 1 drops everything (a mask of zeros rather than a division by zero).
Tensor dropoutMask(const Shape& shape, float p, Generator& generator);

// input * mask, elementwise; used for both the forward and the backward.
Tensor dropoutApply(const Tensor& input, const Tensor& mask);

}  // namespace imerge::cpu
