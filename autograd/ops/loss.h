// Differentiable losses.
#pragma once

#include "autograd/variable.h"

namespace imerge::autograd {

// logits [N, C] float32, labels [N] int64 with values in [0, C) -> the mean over the batch of
// -log softmax(logits)[label], shape [1]; PyTorch's nn.functional.cross_entropy.
Variable softmaxCrossEntropy(const Variable& logits, const Tensor& labels);

}  // namespace imerge::autograd
