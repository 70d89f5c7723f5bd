// Pooling layers over NCHW (PyTorch's nn.MaxPool2d, nn.AvgPool2d, nn.AdaptiveAvgPool2d).
#pragma once

#include "autograd/ops/pooling.h"
#include "layers/module.h"

namespace imerge::layers {

class MaxPool2d : public Module {
 public:
  // stride 0 means "same as the kernel", PyTorch's default.
  MaxPool2d(int64_t kernel, int64_t stride = 0, int64_t padding = 0, bool ceilMode = false);
  Variable forward(const Variable& input) override { return autograd::maxPool2d(input, options_); }
  std::string describe() const override;

 private:
  autograd::Pool2dOptions options_;
};

class AvgPool2d : public Module {
 public:
  AvgPool2d(int64_t kernel, int64_t stride = 0, int64_t padding = 0, bool ceilMode = false,
            bool countIncludePad = true);
  Variable forward(const Variable& input) override { return autograd::avgPool2d(input, options_); }
  std::string describe() const override;

 private:
  autograd::Pool2dOptions options_;
};

class AdaptiveAvgPool2d : public Module {
 public:
  explicit AdaptiveAvgPool2d(std::array<int64_t, 2> outputSize) : outputSize_(outputSize) {}
  Variable forward(const Variable& input) override {
    return autograd::adaptiveAvgPool2d(input, outputSize_);
  }
  std::string describe() const override {
    return detail::concat("AdaptiveAvgPool2d(", outputSize_[0], "x", outputSize_[1], ")");
  }

 private:
  std::array<int64_t, 2> outputSize_;
};

}  // namespace imerge::layers
