// matmul and linear: each forward beside its backward, every product through the gemm of the
// operands' device (OpenBLAS on the CPU, cuBLAS on a GPU; core/backend.h).
#include "autograd/ops/linear.h"

#include "core/backend.h"

namespace imerge::autograd {

namespace {
void checkFloatMatrix(const char* op, const char* name, const Tensor& t, const char* layout) {
  IMERGE_CHECK(t.dtype() == DType::Float32, op, ": ", name, " ", t.describe(), " must be float32");
  IMERGE_CHECK(t.ndim() == 2, op, ": ", name, " ", t.describe(), " must be 2-D ", layout);
}

Tensor gemmKernel(const char* op, const Tensor& a, const Tensor& b, Transpose transposeA,
                  Transpose transposeB) {
  return backendFor(op, a, b).gemm(a, b, transposeA, transposeB);
}

// gradBias [out] = sum over the batch of gradOutput [N, out]
Tensor sumRowsKernel(const Tensor& gradOutput) {
  return backendFor("linear bias gradient", gradOutput).sumRows(gradOutput);
}
}  // namespace

Variable matmul(const Variable& a, const Variable& b) {
  checkFloatMatrix("matmul", "a", a.tensor(), "[M, K]");
  checkFloatMatrix("matmul", "b", b.tensor(), "[K, N]");
  IMERGE_CHECK(a.dim(1) == b.dim(0), "matmul: inner sizes differ: a ", a.tensor().describe(),
               " x b ", b.tensor().describe());
  Tensor out =
      gemmKernel("matmul", a.tensor(), b.tensor(), Transpose::No, Transpose::No);  // [M, N]
  return Variable(out, {a, b},
                  [savedA = a.tensor(), savedB = b.tensor()](std::vector<Variable>& inputs,
                                                             const Tensor& gradOutput) {
                    Variable& left = inputs[0];
                    Variable& right = inputs[1];
                    // d a [M, K] = gradOutput [M, N] x b^T [N, K]
                    if (left.requiresGrad()) {
                      left.addGrad(gemmKernel("matmul backward", gradOutput, savedB, Transpose::No,
                                              Transpose::Yes));
                    }
                    // d b [K, N] = a^T [K, M] x gradOutput [M, N]
                    if (right.requiresGrad()) {
                      right.addGrad(gemmKernel("matmul backward", savedA, gradOutput,
                                               Transpose::Yes, Transpose::No));
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
  // Saved for the backward: the input for the weight's gradient, the weight for the input's.
  auto backward = [savedX = x, savedW = w](std::vector<Variable>& inputs,
                                           const Tensor& gradOutput) {
    Variable& in = inputs[0];
    Variable& wt = inputs[1];
    // d input [N, in] = gradOutput [N, out] x w [out, in]
    if (in.requiresGrad()) {
      in.addGrad(gemmKernel("linear backward", gradOutput, savedW, Transpose::No, Transpose::No));
    }
    // d weight [out, in] = gradOutput^T [out, N] x input [N, in]
    if (wt.requiresGrad()) {
      wt.addGrad(gemmKernel("linear backward", gradOutput, savedX, Transpose::Yes, Transpose::No));
    }
    // d bias [out] = gradOutput summed over the batch
    if (inputs.size() > 2 && inputs[2].requiresGrad()) {
      inputs[2].addGrad(sumRowsKernel(gradOutput));
    }
  };
  const Tensor noBias;
  const Tensor& biasTensor = hasBias ? bias.tensor() : noBias;
  // out [N, out] = x [N, in] x w^T [in, out] (+ bias)
  Tensor out = backendFor("linear", x, w, biasTensor).linearForward(x, w, biasTensor);
  return Variable(out, std::move(inputs), backward);
}

}  // namespace imerge::autograd
