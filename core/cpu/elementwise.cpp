#include "core/cpu/elementwise.h"

namespace imerge::cpu {

namespace {
void checkSameShape(const char* op, const Tensor& a, const Tensor& b) {
  IMERGE_CHECK(a.shape() == b.shape(), op, ": shapes differ: ", a.describe(), " and ",
               b.describe());
}

// out[i] = f(a[i], b[i]) over all elements, in parallel for large tensors.
template <typename Function>
Tensor binary(const char* op, const Tensor& a, const Tensor& b, Function f) {
  checkSameShape(op, a, b);
  Tensor out = Tensor::emptyLike(a);
  const float* x = a.data<float>();
  const float* y = b.data<float>();
  float* z = out.data<float>();
  const int64_t n = a.numel();
#pragma omp parallel for simd if (n > 32768) schedule(static)
  for (int64_t i = 0; i < n; ++i) z[i] = f(x[i], y[i]);
  return out;
}
}  // namespace

void addInPlace(Tensor& destination, const Tensor& source) {
  axpyInPlace(destination, 1.0f, source);
}

void axpyInPlace(Tensor& destination, float alpha, const Tensor& source) {
  checkSameShape("axpyInPlace", destination, source);
  float* y = destination.data<float>();
  const float* x = source.data<float>();
  const int64_t n = destination.numel();
#pragma omp parallel for simd if (n > 32768) schedule(static)
  for (int64_t i = 0; i < n; ++i) y[i] += alpha * x[i];
}

void scaleInPlace(Tensor& destination, float factor) {
  float* y = destination.data<float>();
  const int64_t n = destination.numel();
#pragma omp parallel for simd if (n > 32768) schedule(static)
  for (int64_t i = 0; i < n; ++i) y[i] *= factor;
}

Tensor add(const Tensor& a, const Tensor& b) {
  return binary("add", a, b, [](float x, float y) { return x + y; });
}
Tensor sub(const Tensor& a, const Tensor& b) {
  return binary("sub", a, b, [](float x, float y) { return x - y; });
}
Tensor mul(const Tensor& a, const Tensor& b) {
  return binary("mul", a, b, [](float x, float y) { return x * y; });
}

Tensor scale(const Tensor& a, float factor) {
  Tensor out = a.clone();
  scaleInPlace(out, factor);
  return out;
}

Tensor reluForward(const Tensor& input) {
  Tensor out = Tensor::emptyLike(input);
  const float* x = input.data<float>();
  float* y = out.data<float>();
  const int64_t n = input.numel();
#pragma omp parallel for simd if (n > 32768) schedule(static)
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
  return out;
}

Tensor reluBackward(const Tensor& gradOutput, const Tensor& output) {
  return binary("reluBackward", gradOutput, output,
                [](float g, float y) { return y > 0.0f ? g : 0.0f; });
}

float sumAll(const Tensor& input) {
  const float* x = input.data<float>();
  const int64_t n = input.numel();
  double total = 0;  // double: a float sum of a million terms loses digits PyTorch keeps
#pragma omp parallel for reduction(+ : total) if (n > 32768) schedule(static)
  for (int64_t i = 0; i < n; ++i) total += x[i];
  return static_cast<float>(total);
}

// Rows outer, columns inner, so the inner loop is contiguous and vectorises; bias sizes are
// small enough not to need threads.
Tensor sumRows(const Tensor& matrix) {
  IMERGE_CHECK(matrix.dtype() == DType::Float32 && matrix.ndim() == 2,
               "sumRows: ", matrix.describe(), " must be a float32 matrix [rows, cols]");
  const int64_t rows = matrix.dim(0);
  const int64_t cols = matrix.dim(1);
  Tensor sums = Tensor::zeros({cols});
  float* total = sums.data<float>();
  const float* m = matrix.data<float>();
  for (int64_t row = 0; row < rows; ++row) {
#pragma omp simd
    for (int64_t col = 0; col < cols; ++col) total[col] += m[row * cols + col];
  }
  return sums;
}

}  // namespace imerge::cpu
