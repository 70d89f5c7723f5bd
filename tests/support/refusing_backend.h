// A Backend whose every kernel throws, naming the kernel and the device it was asked on: the
// kernels of the test devices of fake_device.h, whose memory is host memory that no real
// device's kernel may touch. A test that reaches one knows that the op asked its inputs' device
// for the kernel (core/backend.h's backendFor), and which kernel.
#pragma once

#include <array>
#include <string>

#include "core/backend.h"
#include "core/error.h"

namespace imerge::testing {

class RefusingBackend final : public Backend {
 public:
  explicit RefusingBackend(std::string deviceName) : deviceName_(std::move(deviceName)) {}

  Tensor add(const Tensor&, const Tensor&) const override { refuse("add"); }
  Tensor sub(const Tensor&, const Tensor&) const override { refuse("sub"); }
  Tensor mul(const Tensor&, const Tensor&) const override { refuse("mul"); }
  Tensor scale(const Tensor&, float) const override { refuse("scale"); }
  Tensor reluForward(const Tensor&) const override { refuse("reluForward"); }
  Tensor reluBackward(const Tensor&, const Tensor&) const override { refuse("reluBackward"); }
  float sumAll(const Tensor&) const override { refuse("sumAll"); }
  void addInPlace(Tensor&, const Tensor&) const override { refuse("addInPlace"); }
  void fill(Tensor&, float) const override { refuse("fill"); }
  Tensor broadcastBinary(BinaryOp, const Tensor&, const Tensor&) const override {
    refuse("broadcastBinary");
  }
  Tensor sumToShape(const Tensor&, const Shape&) const override { refuse("sumToShape"); }
  Tensor logSoftmaxForward(const Tensor&, int64_t) const override { refuse("logSoftmaxForward"); }
  Tensor logSoftmaxBackward(const Tensor&, const Tensor&, int64_t) const override {
    refuse("logSoftmaxBackward");
  }
  Tensor gemm(const Tensor&, const Tensor&, Transpose, Transpose) const override { refuse("gemm"); }
  Tensor linearForward(const Tensor&, const Tensor&, const Tensor&) const override {
    refuse("linearForward");
  }
  Tensor sumRows(const Tensor&) const override { refuse("sumRows"); }
  Tensor conv2dForward(const Tensor&, const Tensor&, const Tensor&,
                       const Conv2dParams&) const override {
    refuse("conv2dForward");
  }
  Conv2dGrads conv2dBackward(const Tensor&, const Tensor&, const Tensor&, const Conv2dParams&, bool,
                             bool, bool) const override {
    refuse("conv2dBackward");
  }
  MaxPool2dResult maxPool2dForward(const Tensor&, const Pool2dParams&, bool) const override {
    refuse("maxPool2dForward");
  }
  Tensor maxPool2dBackward(const Tensor&, const Tensor&, const Shape&,
                           const Pool2dParams&) const override {
    refuse("maxPool2dBackward");
  }
  Tensor avgPool2dForward(const Tensor&, const Pool2dParams&, bool) const override {
    refuse("avgPool2dForward");
  }
  Tensor avgPool2dBackward(const Tensor&, const Shape&, const Pool2dParams&, bool) const override {
    refuse("avgPool2dBackward");
  }
  Tensor adaptiveAvgPool2dForward(const Tensor&, std::array<int64_t, 2>) const override {
    refuse("adaptiveAvgPool2dForward");
  }
  Tensor adaptiveAvgPool2dBackward(const Tensor&, const Shape&) const override {
    refuse("adaptiveAvgPool2dBackward");
  }
  BatchNormTrainingOutput batchNormTrainingForward(const Tensor&, const Tensor&, const Tensor&,
                                                   Tensor&, Tensor&, float, float) const override {
    refuse("batchNormTrainingForward");
  }
  BatchNormGradients batchNormTrainingBackward(const Tensor&, const Tensor&, const Tensor&,
                                               const Tensor&, const Tensor&, float) const override {
    refuse("batchNormTrainingBackward");
  }
  Tensor batchNormInferenceForward(const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                                   const Tensor&, float) const override {
    refuse("batchNormInferenceForward");
  }
  BatchNormGradients batchNormInferenceBackward(const Tensor&, const Tensor&, const Tensor&,
                                                const Tensor&, const Tensor&,
                                                float) const override {
    refuse("batchNormInferenceBackward");
  }
  LrnResult lrnForward(const Tensor&, const LrnParams&, bool) const override {
    refuse("lrnForward");
  }
  Tensor lrnBackward(const Tensor&, const Tensor&, const Tensor&, const LrnParams&) const override {
    refuse("lrnBackward");
  }
  SoftmaxCrossEntropyForward softmaxCrossEntropyForward(const Tensor&,
                                                        const Tensor&) const override {
    refuse("softmaxCrossEntropyForward");
  }
  Tensor softmaxCrossEntropyBackward(const Tensor&, const Tensor&, float) const override {
    refuse("softmaxCrossEntropyBackward");
  }
  Tensor nllLossForward(const Tensor&, const Tensor&, const Tensor&,
                        const NllLossParams&) const override {
    refuse("nllLossForward");
  }
  Tensor nllLossBackward(const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                         const NllLossParams&) const override {
    refuse("nllLossBackward");
  }
  Tensor dropoutMask(const Shape&, float, Generator&, Device&) const override {
    refuse("dropoutMask");
  }
  void sgdUpdate(Tensor&, const Tensor&, Tensor&, const SgdStep&) const override {
    refuse("sgdUpdate");
  }

 private:
  [[noreturn]] void refuse(const char* kernel) const {
    IMERGE_FAIL("kernel ", kernel, " asked of ", deviceName_,
                ", a test device that runs no kernels");
  }

  std::string deviceName_;
};

}  // namespace imerge::testing
