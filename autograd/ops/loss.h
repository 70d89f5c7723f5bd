// Differentiable losses.
#pragma once

#include <cstdint>

#include "autograd/variable.h"
#include "core/kernel_params.h"

namespace imerge::autograd {

// logits [N, C] float32, labels [N] int64 with values in [0, C) -> the mean over the batch of
// -log softmax(logits)[label], shape [1]; PyTorch's nn.functional.cross_entropy. One fused
// kernel on every device: what training calls.
Variable softmaxCrossEntropy(const Variable& logits, const Tensor& labels);

// PyTorch's (1.13) options of nn.functional.cross_entropy for class-index targets.
struct CrossEntropyOptions {
  Tensor weight;                // [C] float32 per-class weights, or undefined (all 1)
  int64_t ignoreIndex = -100;   // samples with this label add nothing and are not counted
  float labelSmoothing = 0.0f;  // in [0, 1]: that much of the target spread over all classes
  Reduction reduction = Reduction::Mean;  // None: [N]; Mean, Sum: [1]
};

// logits [N, C] float32, labels [N] int64, each in [0, C) or options.ignoreIndex. The loss of
// sample n is
//   (1 - s) w[y_n] (-log p[n, y_n]) + s / C sum_c w[c] (-log p[n, c])      (s: labelSmoothing)
// and 0 for an ignored sample; Mean divides the sum by the total weight w[y_n] of the samples
// not ignored (their count without weights), the smoothing term included, as torch 1.13 does;
// with every sample ignored that is NaN, as in PyTorch. A label outside [0, C) that is not the
// ignore index is refused, naming its index, its value and the class count.
//
// The default options, with no label ignored, take softmaxCrossEntropy's fused kernels (same
// values, any device); the others compose logSoftmax with a loss kernel, on the CPU only for
// now (CUDA refuses them clearly).
Variable crossEntropy(const Variable& logits, const Tensor& labels,
                      const CrossEntropyOptions& options = {});

}  // namespace imerge::autograd
