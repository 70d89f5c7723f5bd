// Softmax cross-entropy on the CPU: the loss PyTorch calls nn.functional.cross_entropy.
//
// Contract:
//   logits        [N, C] float32, raw scores
//   labels        [N]    int64, each in [0, C)
//   probabilities [N, C] float32, softmax(logits) per row, saved by the forward for the backward
//   loss          mean over the batch of -log probabilities[n, labels[n]]
//
// The forward subtracts each row's maximum before exponentiating, so logits of +-50 (or +-500)
// neither overflow nor lose the small probabilities. Rows run in parallel (OpenMP).
#pragma once

#include "core/kernel_params.h"
#include "core/tensor.h"

namespace imerge::cpu {

using imerge::SoftmaxCrossEntropyForward;  // core/kernel_params.h

// Throws imerge::Error (naming softmaxCrossEntropy, the shapes, and for a bad label its index
// and value) when the inputs break the contract above.
SoftmaxCrossEntropyForward softmaxCrossEntropyForward(const Tensor& logits, const Tensor& labels);

// gradLogits [N, C] = (probabilities - onehot(labels)) * gradLoss / N, where gradLoss is the
// gradient of whatever consumed the mean loss (1 for a plain backward()).
Tensor softmaxCrossEntropyBackward(const Tensor& probabilities, const Tensor& labels,
                                   float gradLoss);

}  // namespace imerge::cpu
