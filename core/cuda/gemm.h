// Row-major single-precision matrix products on a CUDA device through cuBLAS, the counterpart
// of core/cpu/gemm.h. cuBLAS is column-major; a row-major C = A x B is the column-major
// C^T = B^T x A^T, so the operands are passed swapped and nothing is copied or transposed.
#pragma once

#include "core/cpu/gemm.h"
#include "core/tensor.h"

namespace imerge::cuda {

using cpu::Transpose;

// op(a) x op(b) for 2-D float32 tensors on one CUDA device.
// a [M, K] (or [K, M] transposed), b [K, N] (or [N, K] transposed) -> [M, N]
Tensor gemm(const Tensor& a, const Tensor& b, Transpose transposeA = Transpose::No,
            Transpose transposeB = Transpose::No);

// out [M, N] = alpha * op(a) x op(b) + beta * out
void gemmInto(Tensor& out, const Tensor& a, const Tensor& b, Transpose transposeA,
              Transpose transposeB, float alpha = 1.0f, float beta = 0.0f);

}  // namespace imerge::cuda
