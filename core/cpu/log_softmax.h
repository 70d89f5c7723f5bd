// Log-softmax over one dimension on the CPU, forward and backward, over contiguous float32.
//
//   output = input - max - log(sum(exp(input - max)))   along `dim`, max taken along `dim`
//   gradInput = gradOutput - exp(output) * sum(gradOutput)   along `dim`
//
// The input is read as [outer, size, inner] around `dim` (size = input.dim(dim)); each of the
// outer * inner lines along `dim` is independent, and they run in parallel (OpenMP). Subtracting
// the line's maximum first keeps exp from overflowing at large inputs, and the log-sum-exp form
// never takes the log of an underflowed probability, so outputs stay finite for inputs of +-1e4.
#pragma once

#include <cstdint>

#include "core/tensor.h"

namespace imerge::cpu {

// dim in [0, input.ndim()); throws imerge::Error naming logSoftmax otherwise, or when the input
// is not float32 or has an empty `dim`.
Tensor logSoftmaxForward(const Tensor& input, int64_t dim);
// output: the forward's result; gradOutput of its shape.
Tensor logSoftmaxBackward(const Tensor& gradOutput, const Tensor& output, int64_t dim);

}  // namespace imerge::cpu
