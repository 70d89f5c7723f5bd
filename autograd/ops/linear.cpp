// matmul and linear: each forward beside its backward, every product through cpu::gemm on
// the CPU or cuda::gemm (cuBLAS) on a GPU, picked by the operands' device.
#include "autograd/ops/linear.h"

#include <algorithm>

#include "core/cpu/gemm.h"
#include "core/cuda/elementwise.h"
#include "core/cuda/gemm.h"
#include "core/device_dispatch.h"

namespace imerge::autograd {

using cpu::Transpose;

namespace {
void checkFloatMatrix(const char* op, const char* name, const Tensor& t, const char* layout) {
  IMERGE_CHECK(t.dtype() == DType::Float32, op, ": ", name, " ", t.describe(), " must be float32");
  IMERGE_CHECK(t.ndim() == 2, op, ": ", name, " ", t.describe(), " must be 2-D ", layout);
}

// gradBias [out] = sum over rows of gradOutput [N, out]. Rows outer, columns inner, so the
// inner loop is contiguous and vectorises; bias sizes are small enough not to need threads.
Tensor sumRows(const Tensor& gradOutput) {
  const int64_t rows = gradOutput.dim(0);
  const int64_t cols = gradOutput.dim(1);
  Tensor sums = Tensor::zeros({cols});
  float* total = sums.data<float>();
  const float* g = gradOutput.data<float>();
  for (int64_t row = 0; row < rows; ++row) {
#pragma omp simd
    for (int64_t col = 0; col < cols; ++col) total[col] += g[row * cols + col];
  }
  return sums;
}

Tensor gemmKernel(const char* op, const Tensor& a, const Tensor& b, Transpose transposeA,
                  Transpose transposeB) {
  return runsOnCuda(op, a, b) ? cuda::gemm(a, b, transposeA, transposeB)
                              : cpu::gemm(a, b, transposeA, transposeB);
}

Tensor sumRowsKernel(const Tensor& gradOutput) {
  return runsOnCuda("linear bias gradient", gradOutput) ? cuda::sumRows(gradOutput)
                                                        : sumRows(gradOutput);
}

// out [N, out] = x [N, in] x w^T [in, out] (+ bias [out] on every row), on the GPU.
Tensor linearForwardCuda(const Tensor& x, const Tensor& w, const Tensor& bias) {
  Tensor out = cuda::gemm(x, w, Transpose::No, Transpose::Yes);
  if (bias.defined()) cuda::addRowInPlace(out, bias);
  return out;
}
}  // namespace

Variable matmul(const Variable& a, const Variable& b) {
  checkFloatMatrix("matmul", "a", a.tensor(), "[M, K]");
  checkFloatMatrix("matmul", "b", b.tensor(), "[K, N]");
  IMERGE_CHECK(a.dim(1) == b.dim(0), "matmul: inner sizes differ: a ", a.tensor().describe(),
               " x b ", b.tensor().describe());
  Tensor out =
      gemmKernel("matmul", a.tensor(), b.tensor(), Transpose::No, Transpose::No);  // [M, N]
  return Variable(out, {a, b}, [](std::vector<Variable>& inputs, const Tensor& gradOutput) {
    Variable& left = inputs[0];
    Variable& right = inputs[1];
    // d a [M, K] = gradOutput [M, N] x b^T [N, K]
    if (left.requiresGrad()) {
      left.addGrad(
          gemmKernel("matmul backward", gradOutput, right.tensor(), Transpose::No, Transpose::Yes));
    }
    // d b [K, N] = a^T [K, M] x gradOutput [M, N]
    if (right.requiresGrad()) {
      right.addGrad(
          gemmKernel("matmul backward", left.tensor(), gradOutput, Transpose::Yes, Transpose::No));
    }
  });
}

Variable linear(const Variable& input, const Variable& weight, const Variable& bias) {
  const Tensor& x = input.tensor();   // [N, in]
  const Tensor& w = weight.tensor();  // [out, in]
  checkFloatMatrix("linear", "input", x, "[N, in_features]");
  checkFloatMatrix("linear", "weight", w, "[out_features, in_features]");
  IMERGE_CHECK(x.dim(1) == w.dim(1), "linear: input ", x.describe(), " has ", x.dim(1),
               " features but weight ", w.describe(), " expects ", w.dim(1));
  const bool hasBias = bias.defined();
  if (hasBias) {
    const Tensor& b = bias.tensor();
    IMERGE_CHECK(b.dtype() == DType::Float32, "linear: bias ", b.describe(), " must be float32");
    IMERGE_CHECK(b.ndim() == 1 && b.dim(0) == w.dim(0), "linear: bias ", b.describe(), " must be [",
                 w.dim(0), "] to match weight ", w.describe());
  }

  std::vector<Variable> inputs{input, weight};
  if (hasBias) inputs.push_back(bias);
  auto backward = [](std::vector<Variable>& inputs, const Tensor& gradOutput) {
    Variable& in = inputs[0];
    Variable& wt = inputs[1];
    // d input [N, in] = gradOutput [N, out] x w [out, in]
    if (in.requiresGrad()) {
      in.addGrad(
          gemmKernel("linear backward", gradOutput, wt.tensor(), Transpose::No, Transpose::No));
    }
    // d weight [out, in] = gradOutput^T [out, N] x input [N, in]
    if (wt.requiresGrad()) {
      wt.addGrad(
          gemmKernel("linear backward", gradOutput, in.tensor(), Transpose::Yes, Transpose::No));
    }
    // d bias [out] = gradOutput summed over the batch
    if (inputs.size() > 2 && inputs[2].requiresGrad()) {
      inputs[2].addGrad(sumRowsKernel(gradOutput));
    }
  };
  const Tensor noBias;
  if (runsOnCuda("linear", x, w, hasBias ? bias.tensor() : noBias)) {
    return Variable(linearForwardCuda(x, w, hasBias ? bias.tensor() : noBias), std::move(inputs),
                    backward);
  }

  const int64_t batch = x.dim(0);
  const int64_t outFeatures = w.dim(0);
  Tensor out = Tensor::empty({batch, outFeatures});  // [N, out]
  float beta = 0.0f;
  if (hasBias) {
    // Seed every row with the bias and let sgemm accumulate onto it (beta = 1): no second pass
    // over the output and no temporary.
    const float* b = bias.tensor().data<float>();
    float* y = out.data<float>();
    for (int64_t row = 0; row < batch; ++row) {
      std::copy(b, b + outFeatures, y + row * outFeatures);
    }
    beta = 1.0f;
  }
  // out [N, out] = x [N, in] x w^T [in, out] (+ bias)
  cpu::gemmInto(out, x, w, Transpose::No, Transpose::Yes, 1.0f, beta);

  return Variable(out, std::move(inputs), backward);
}

}  // namespace imerge::autograd
