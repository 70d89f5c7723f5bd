// Cross-entropy with PyTorch's options, from log-probabilities, on the CPU: what
// torch.nn.functional.cross_entropy (1.13) computes after its log_softmax, for class-index
// targets (NllLossParams, core/kernel_params.h, has the formula).
//
// Contract:
//   logProbabilities [N, C] float32 (logSoftmax over C)
//   labels           [N]    int64, each in [0, C) or equal to params.ignoreIndex
//   weight           [C]    float32 per-class weights, or undefined (all 1)
//   loss             [N] for Reduction::None, else [1]
// Mean divides by the total weight of the samples not ignored, for the label-smoothing term as
// well (measured on torch 1.13: tests/reference/torch_loss.py); with every sample ignored that
// is 0 / 0, NaN, as in PyTorch.
#pragma once

#include "core/kernel_params.h"
#include "core/tensor.h"

namespace imerge::cpu {

// Throws imerge::Error naming crossEntropy and the operand at fault; for a label outside
// [0, C) that is not the ignore index, its index, its value and the class count.
Tensor nllLossForward(const Tensor& logProbabilities, const Tensor& labels, const Tensor& weight,
                      const NllLossParams& params);

// gradLoss: the gradient of the forward's loss ([N] or [1]) -> the gradient of the
// log-probabilities [N, C].
Tensor nllLossBackward(const Tensor& gradLoss, const Tensor& logProbabilities, const Tensor& labels,
                       const Tensor& weight, const NllLossParams& params);

}  // namespace imerge::cpu
