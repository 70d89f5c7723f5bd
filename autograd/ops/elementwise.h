// Differentiable elementwise, reduction and shape ops.
#pragma once

#include "autograd/variable.h"
#include "core/random.h"

namespace imerge::autograd {

// Broadcasting as NumPy and PyTorch: trailing dimensions aligned, size 1 and missing leading
// dimensions stretched ([4, 1, 3] + [5, 1] -> [4, 5, 3]); each input's gradient is summed back
// over the dimensions stretched for it. Shapes that do not broadcast are refused in PyTorch's
// words, naming both shapes. Equal shapes take the plain kernels. Broadcasting runs on the CPU;
// on CUDA only equal shapes (a clear refusal otherwise).
Variable add(const Variable& a, const Variable& b);
Variable sub(const Variable& a, const Variable& b);
Variable mul(const Variable& a, const Variable& b);
Variable scale(const Variable& a, float factor);
Variable relu(const Variable& input);

Variable sum(const Variable& input);   // a one-element result of shape [1]
Variable mean(const Variable& input);  // likewise

Variable reshape(const Variable& input, const Shape& shape);  // a view; -1 allowed once
Variable flatten(const Variable& input);                      // [N, ...] -> [N, rest]

// Inverted dropout: in training, zeroes each element with probability p and scales the rest
// by 1/(1-p); in evaluation, the identity. The mask is drawn from `generator`.
Variable dropout(const Variable& input, float p, bool training,
                 Generator& generator = defaultGenerator());

}  // namespace imerge::autograd
