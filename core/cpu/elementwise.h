// Elementwise CPU kernels over whole tensors (OpenMP across elements). Shapes must match
// exactly; broadcasting is the ops' business, not these kernels'.
#pragma once

#include "core/tensor.h"

namespace imerge::cpu {

// destination += source
void addInPlace(Tensor& destination, const Tensor& source);
// destination += alpha * source
void axpyInPlace(Tensor& destination, float alpha, const Tensor& source);
// destination *= factor
void scaleInPlace(Tensor& destination, float factor);

Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor scale(const Tensor& a, float factor);

Tensor reluForward(const Tensor& input);
// gradInput = gradOutput where output > 0, else 0
Tensor reluBackward(const Tensor& gradOutput, const Tensor& output);

float sumAll(const Tensor& input);

// matrix [rows, cols] -> sums over the rows [cols]: the bias gradient of Linear.
Tensor sumRows(const Tensor& matrix);

}  // namespace imerge::cpu
