// The CUDA kernels' answer in a build without CUDA: the declarations of core/cuda/*.h exist in
// every build so that the ops' dispatch compiles once; here each says why it cannot run. No
// tensor can reach them in such a build (there is no CudaDevice to allocate one), so these
// guard against a Device of type CUDA from elsewhere.
#ifndef IMERGE_HAVE_CUDA

#include "core/cuda/elementwise.h"
#include "core/cuda/gemm.h"
#include "core/cuda/sgd_update.h"
#include "core/cuda/softmax_cross_entropy.h"

namespace imerge::cuda {

namespace {
[[noreturn]] void unavailable(const char* op) {
  IMERGE_FAIL(op,
              " on a CUDA tensor: this build of imerge has no CUDA support (nvcc was not "
              "found at build time)");
}
}  // namespace

void addInPlace(Tensor&, const Tensor&) {
  unavailable("addInPlace");
}
void axpyInPlace(Tensor&, float, const Tensor&) {
  unavailable("axpyInPlace");
}
void scaleInPlace(Tensor&, float) {
  unavailable("scaleInPlace");
}
void fill(Tensor&, float) {
  unavailable("fill");
}
Tensor add(const Tensor&, const Tensor&) {
  unavailable("add");
}
Tensor sub(const Tensor&, const Tensor&) {
  unavailable("sub");
}
Tensor mul(const Tensor&, const Tensor&) {
  unavailable("mul");
}
Tensor scale(const Tensor&, float) {
  unavailable("scale");
}
Tensor reluForward(const Tensor&) {
  unavailable("relu");
}
Tensor reluBackward(const Tensor&, const Tensor&) {
  unavailable("reluBackward");
}
float sumAll(const Tensor&) {
  unavailable("sumAll");
}
Tensor sumRows(const Tensor&) {
  unavailable("sumRows");
}
void addRowInPlace(Tensor&, const Tensor&) {
  unavailable("addRowInPlace");
}

Tensor gemm(const Tensor&, const Tensor&, Transpose, Transpose) {
  unavailable("gemm");
}
void gemmInto(Tensor&, const Tensor&, const Tensor&, Transpose, Transpose, float, float) {
  unavailable("gemm");
}

cpu::SoftmaxCrossEntropyForward softmaxCrossEntropyForward(const Tensor&, const Tensor&) {
  unavailable("softmaxCrossEntropy");
}
Tensor softmaxCrossEntropyBackward(const Tensor&, const Tensor&, float) {
  unavailable("softmaxCrossEntropyBackward");
}

void sgdUpdate(Tensor&, const Tensor&, Tensor&, const SgdStep&) {
  unavailable("sgdUpdate");
}

}  // namespace imerge::cuda

#endif  // IMERGE_HAVE_CUDA
