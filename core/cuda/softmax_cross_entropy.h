// Softmax cross-entropy on a CUDA device, with the contract of core/cpu/softmax_cross_entropy.h:
// logits [N, C] float32, labels [N] int64 in [0, C). One thread block per row; the loss is
// averaged on the device and copied back (the only wait of the forward).
//
// The labels ([N] int64, small) are copied to the host and checked there first, so a label
// outside [0, C) is reported by index and value as on the CPU instead of reading out of bounds.
#pragma once

#include "core/cpu/softmax_cross_entropy.h"
#include "core/tensor.h"

namespace imerge::cuda {

cpu::SoftmaxCrossEntropyForward softmaxCrossEntropyForward(const Tensor& logits,
                                                           const Tensor& labels);

// gradLogits [N, C] = (probabilities - onehot(labels)) * gradLoss / N
Tensor softmaxCrossEntropyBackward(const Tensor& probabilities, const Tensor& labels,
                                   float gradLoss);

}  // namespace imerge::cuda
