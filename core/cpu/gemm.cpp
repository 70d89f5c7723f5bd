#include "core/cpu/gemm.h"

#include <oneapi/dnnl/dnnl.h>

namespace imerge::cpu {

namespace {
char toDnnl(Transpose transpose) {
  return transpose == Transpose::Yes ? 'T' : 'N';
}

// The [rows, cols] an operand contributes to the product after op().
struct Operand {
  int64_t rows;
  int64_t cols;
};

Operand operandShape(const char* name, const Tensor& t, Transpose transpose) {
  IMERGE_CHECK(t.dtype() == DType::Float32, "gemm: ", name, " ", t.describe(), " must be float32");
  IMERGE_CHECK(t.ndim() == 2, "gemm: ", name, " ", t.describe(), " must be 2-D");
  if (transpose == Transpose::Yes) return {t.dim(1), t.dim(0)};
  return {t.dim(0), t.dim(1)};
}

const char* opName(Transpose transpose) {
  return transpose == Transpose::Yes ? "^T" : "";
}
}  // namespace

void sgemm(Transpose transposeA, Transpose transposeB, int64_t m, int64_t n, int64_t k, float alpha,
           const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
           int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    // BLAS leaves c untouched when k == 0 only for beta == 1; make the empty sum explicit.
    for (int64_t row = 0; row < m; ++row) {
      for (int64_t col = 0; col < n; ++col) {
        c[row * ldc + col] = beta == 0.0f ? 0.0f : beta * c[row * ldc + col];
      }
    }
    return;
  }
  // oneDNN's sgemm is row-major, takes 64-bit sizes and picks its kernel from the CPU it runs
  // on. OpenBLAS 0.3.21 (Debian 12) takes an AVX-512 AMD EPYC for Haswell and runs its AVX2
  // kernels there at half the speed (docs/performance.md, issue 14).
  const dnnl_status_t status = dnnl_sgemm(toDnnl(transposeA), toDnnl(transposeB), m, n, k, alpha, a,
                                          lda, b, ldb, beta, c, ldc);
  IMERGE_CHECK(status == dnnl_success, "sgemm: oneDNN refused the product [", m, ", ", k, "] x [",
               k, ", ", n, "] with lda ", lda, ", ldb ", ldb, ", ldc ", ldc, " (status ",
               static_cast<int>(status), ")");
}

Tensor gemm(const Tensor& a, const Tensor& b, Transpose transposeA, Transpose transposeB) {
  const Operand left = operandShape("a", a, transposeA);
  const Operand right = operandShape("b", b, transposeB);
  Tensor out = Tensor::empty({left.rows, right.cols});
  gemmInto(out, a, b, transposeA, transposeB, 1.0f, 0.0f);
  return out;
}

void gemmInto(Tensor& out, const Tensor& a, const Tensor& b, Transpose transposeA,
              Transpose transposeB, float alpha, float beta) {
  const Operand left = operandShape("a", a, transposeA);
  const Operand right = operandShape("b", b, transposeB);
  IMERGE_CHECK(left.cols == right.rows, "gemm: inner sizes differ: a", opName(transposeA), " ",
               a.describe(), " x b", opName(transposeB), " ", b.describe());
  IMERGE_CHECK(out.dtype() == DType::Float32 && out.ndim() == 2 && out.dim(0) == left.rows &&
                   out.dim(1) == right.cols,
               "gemm: output ", out.describe(), " must be float32[", left.rows, ", ", right.cols,
               "] for a", opName(transposeA), " ", a.describe(), " x b", opName(transposeB), " ",
               b.describe());
  // Row-major leading dimensions are the stored row lengths, whatever op() does.
  sgemm(transposeA, transposeB, left.rows, right.cols, left.cols, alpha, a.data<float>(), a.dim(1),
        b.data<float>(), b.dim(1), beta, out.data<float>(), out.dim(1));
}

Tensor linearForward(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  const int64_t batch = x.dim(0);
  const int64_t outFeatures = weight.dim(0);
  Tensor out = Tensor::empty({batch, outFeatures});  // [N, out]
  float beta = 0.0f;
  if (bias.defined()) {
    const float* b = bias.data<float>();
    float* y = out.data<float>();
    for (int64_t row = 0; row < batch; ++row) {
      std::copy(b, b + outFeatures, y + row * outFeatures);
    }
    beta = 1.0f;
  }
  gemmInto(out, x, weight, Transpose::No, Transpose::Yes, 1.0f, beta);
  return out;
}

}  // namespace imerge::cpu
