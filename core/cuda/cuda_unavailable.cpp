// The CUDA kernels' answer in a build without CUDA: the declarations of core/cuda/*.h exist in
// every build so that the ops' dispatch compiles once; here each says why it cannot run. No
// tensor can reach them in such a build (there is no CudaDevice to allocate one), so these
// guard against a Device of type CUDA from elsewhere.
#ifndef IMERGE_HAVE_CUDA

#include "core/cuda/batch_norm.h"
#include "core/cuda/convolution.h"
#include "core/cuda/dropout.h"
#include "core/cuda/elementwise.h"
#include "core/cuda/gemm.h"
#include "core/cuda/lrn.h"
#include "core/cuda/pooling.h"
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

Tensor conv2dForward(const Tensor&, const Tensor&, const Tensor&, const Conv2dParams&) {
  unavailable("conv2d");
}
Conv2dGrads conv2dBackward(const Tensor&, const Tensor&, const Tensor&, const Conv2dParams&, bool,
                           bool, bool) {
  unavailable("conv2d backward");
}
size_t convAlgorithmSearches() {
  return 0;
}

BatchNormTrainingResult batchNormTrainingForward(const Tensor&, const Tensor&, const Tensor&,
                                                 Tensor&, Tensor&, float, float) {
  unavailable("batchNorm2d");
}
Tensor batchNormInferenceForward(const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                                 const Tensor&, float) {
  unavailable("batchNorm2d");
}
BatchNormGradients batchNormTrainingBackward(const Tensor&, const Tensor&, const Tensor&,
                                             const Tensor&, const Tensor&, float) {
  unavailable("batchNorm2d backward");
}
BatchNormGradients batchNormInferenceBackward(const Tensor&, const Tensor&, const Tensor&,
                                              const Tensor&, const Tensor&, float) {
  unavailable("batchNorm2d backward");
}

MaxPool2dResult maxPool2dForward(const Tensor&, const Pool2dParams&, bool) {
  unavailable("maxPool2d");
}
Tensor maxPool2dBackward(const Tensor&, const Tensor&, const Shape&, const Pool2dParams&) {
  unavailable("maxPool2d backward");
}
Tensor avgPool2dForward(const Tensor&, const Pool2dParams&, bool) {
  unavailable("avgPool2d");
}
Tensor avgPool2dBackward(const Tensor&, const Shape&, const Pool2dParams&, bool) {
  unavailable("avgPool2d backward");
}
Tensor adaptiveAvgPool2dForward(const Tensor&, std::array<int64_t, 2>) {
  unavailable("adaptiveAvgPool2d");
}
Tensor adaptiveAvgPool2dBackward(const Tensor&, const Shape&) {
  unavailable("adaptiveAvgPool2d backward");
}

LrnResult lrnForward(const Tensor&, const LrnParams&, bool) {
  unavailable("localResponseNorm");
}
Tensor lrnBackward(const Tensor&, const Tensor&, const Tensor&, const LrnParams&) {
  unavailable("localResponseNorm backward");
}

Tensor dropoutMask(const Shape&, float, Generator&, Device&) {
  unavailable("dropout");
}

}  // namespace imerge::cuda

#endif  // IMERGE_HAVE_CUDA
