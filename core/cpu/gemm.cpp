#include "core/cpu/gemm.h"

#include <cblas.h>

#include <algorithm>
#include <limits>

namespace imerge::cpu {

namespace {
CBLAS_TRANSPOSE toCblas(Transpose transpose) {
  return transpose == Transpose::Yes ? CblasTrans : CblasNoTrans;
}

// cblas takes int (blasint) sizes; a silent wrap-around would compute garbage.
blasint checkedInt(int64_t value, const char* what) {
  IMERGE_CHECK(value >= 0 && value <= std::numeric_limits<blasint>::max(), "sgemm: ", what, " = ",
               value, " does not fit OpenBLAS' integer size");
  return static_cast<blasint>(value);
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
  cblas_sgemm(CblasRowMajor, toCblas(transposeA), toCblas(transposeB), checkedInt(m, "m"),
              checkedInt(n, "n"), checkedInt(k, "k"), alpha, a, checkedInt(lda, "lda"), b,
              checkedInt(ldb, "ldb"), beta, c, checkedInt(ldc, "ldc"));
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
