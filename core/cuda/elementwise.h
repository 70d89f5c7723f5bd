// Elementwise and reduction kernels on a CUDA device, the counterparts of core/cpu/elementwise.h
// (same names, same contracts). Every kernel runs on the tensor's CudaDevice stream and returns
// without waiting, except those that return a host value (sumAll), which wait for it.
//
// Only builds with CUDA have them; the ops reach them through core/cuda/cuda_backend.cpp.
#pragma once

#include "core/tensor.h"

namespace imerge::cuda {

// destination += source
void addInPlace(Tensor& destination, const Tensor& source);
// destination += alpha * source
void axpyInPlace(Tensor& destination, float alpha, const Tensor& source);
// destination *= factor
void scaleInPlace(Tensor& destination, float factor);
// every float32 element = value
void fill(Tensor& destination, float value);

Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor scale(const Tensor& a, float factor);

Tensor reluForward(const Tensor& input);
// gradInput = gradOutput where output > 0, else 0
Tensor reluBackward(const Tensor& gradOutput, const Tensor& output);

// The sum of all elements, copied back to the host.
float sumAll(const Tensor& input);

// matrix [rows, cols] -> sums [cols]: the bias gradient of Linear (a sum over the batch).
Tensor sumRows(const Tensor& matrix);
// matrix [rows, cols] += row [cols] on every row: Linear's bias.
void addRowInPlace(Tensor& matrix, const Tensor& row);

}  // namespace imerge::cuda
