// Row-major single-precision matrix products over oneDNN's sgemm (dnnl_sgemm).
//
// Every dense product in the CPU path (Linear forward and backward, matmul) goes through here,
// so the one place that knows the BLAS argument order is this file. Tensors are row-major and
// contiguous; a transposed operand is read in place through the leading dimension, never
// copied.
#pragma once

#include <cstdint>

#include "core/kernel_params.h"
#include "core/tensor.h"

namespace imerge::cpu {

using imerge::Transpose;  // core/kernel_params.h

// c [m, n] = alpha * op(a) [m, k] x op(b) [k, n] + beta * c.
// op(a) is a [m, k] (lda >= k) or, transposed, a stored as [k, m] (lda >= m); likewise b.
// With beta == 0, c's old contents are ignored (NaNs in it do not leak, as BLAS promises).
void sgemm(Transpose transposeA, Transpose transposeB, int64_t m, int64_t n, int64_t k, float alpha,
           const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
           int64_t ldc);

// op(a) x op(b) for 2-D float32 tensors; op transposes when asked.
// a [M, K] (or [K, M] transposed), b [K, N] (or [N, K] transposed) -> [M, N]
Tensor gemm(const Tensor& a, const Tensor& b, Transpose transposeA = Transpose::No,
            Transpose transposeB = Transpose::No);

// out = alpha * op(a) x op(b) + beta * out, with out already of shape [M, N]. beta = 1
// accumulates, which is how Linear adds its bias and how gradients add up without a temporary.
void gemmInto(Tensor& out, const Tensor& a, const Tensor& b, Transpose transposeA,
              Transpose transposeB, float alpha = 1.0f, float beta = 0.0f);

// Linear's forward: x [N, in] x weight^T [in, out] + bias [out] (undefined: none) -> [N, out].
// The bias seeds every row and sgemm accumulates onto it (beta = 1): no second pass over the
// output and no temporary. The operands are checked by the caller (autograd's linear).
Tensor linearForward(const Tensor& x, const Tensor& weight, const Tensor& bias);

}  // namespace imerge::cpu
