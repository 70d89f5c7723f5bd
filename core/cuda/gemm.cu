#include <cublas_v2.h>

#include "core/cuda/elementwise.h"
#include "core/cuda/gemm.h"
#include "core/cuda/launch.h"

namespace imerge::cuda {

namespace {
void checkMatrix(const char* op, const char* name, const Tensor& t) {
  IMERGE_CHECK(t.dtype() == DType::Float32 && t.ndim() == 2, op, ": ", name, " ", t.describe(),
               " must be a 2-D float32 matrix");
}
cublasOperation_t toCublas(Transpose transpose) {
  return transpose == Transpose::Yes ? CUBLAS_OP_T : CUBLAS_OP_N;
}
}  // namespace

Tensor gemm(const Tensor& a, const Tensor& b, Transpose transposeA, Transpose transposeB) {
  checkMatrix("gemm", "a", a);
  checkMatrix("gemm", "b", b);
  const int64_t m = transposeA == Transpose::Yes ? a.dim(1) : a.dim(0);
  const int64_t n = transposeB == Transpose::Yes ? b.dim(0) : b.dim(1);
  Tensor out = Tensor::empty({m, n}, DType::Float32, a.device());
  cuda::gemmInto(out, a, b, transposeA, transposeB, 1.0f, 0.0f);  // not cpu:: (found by ADL)
  return out;
}

void gemmInto(Tensor& out, const Tensor& a, const Tensor& b, Transpose transposeA,
              Transpose transposeB, float alpha, float beta) {
  checkMatrix("gemm", "a", a);
  checkMatrix("gemm", "b", b);
  checkMatrix("gemm", "out", out);
  const bool ta = transposeA == Transpose::Yes, tb = transposeB == Transpose::Yes;
  const int64_t m = ta ? a.dim(1) : a.dim(0);
  const int64_t k = ta ? a.dim(0) : a.dim(1);
  const int64_t kB = tb ? b.dim(1) : b.dim(0);
  const int64_t n = tb ? b.dim(0) : b.dim(1);
  IMERGE_CHECK(k == kB, "gemm: inner sizes differ: op(a) of ", a.describe(), " x op(b) of ",
               b.describe());
  IMERGE_CHECK(out.dim(0) == m && out.dim(1) == n, "gemm: out ", out.describe(), " is not [", m,
               ", ", n, "]");
  if (m == 0 || n == 0) return;
  if (k == 0) {
    // An empty inner dimension: the product is zero and only beta * out remains.
    if (beta == 0.0f) {
      out.zero();
    } else {
      scaleInPlace(out, beta);
    }
    return;
  }
  CudaDevice& device = cudaDeviceOf(out);
  device.makeCurrent();
  // Row-major C [m, n] is column-major C^T [n, m] = op(b)^T x op(a)^T: pass b first, a second,
  // with the same transpose flags, and the leading dimensions of the row-major storage.
  const int lda = static_cast<int>(a.dim(1));
  const int ldb = static_cast<int>(b.dim(1));
  const int ldc = static_cast<int>(n);
  IMERGE_CUDA_CHECK(cublasSgemm(device.cublas(), toCublas(transposeB), toCublas(transposeA),
                                static_cast<int>(n), static_cast<int>(m), static_cast<int>(k),
                                &alpha, b.data<float>(), ldb, a.data<float>(), lda, &beta,
                                out.data<float>(), ldc));
}

}  // namespace imerge::cuda
