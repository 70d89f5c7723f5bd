// Conv2d: y = conv(x, weight) + bias over NCHW images (PyTorch's nn.Conv2d).
#pragma once

#include "autograd/ops/convolution.h"
#include "layers/module.h"

namespace imerge::layers {

struct Conv2dConfig {
  int64_t inChannels = 0;
  int64_t outChannels = 0;
  std::array<int64_t, 2> kernel{3, 3};
  autograd::Conv2dOptions options;  // stride, padding, dilation, groups
  bool bias = true;
};

class Conv2d : public Module {
 public:
  explicit Conv2d(const Conv2dConfig& config, Generator& generator = defaultGenerator());
  // The common case: square kernel, stride and padding.
  Conv2d(int64_t inChannels, int64_t outChannels, int64_t kernel, int64_t stride = 1,
         int64_t padding = 0, bool bias = true, Generator& generator = defaultGenerator());

  Variable forward(const Variable& input) override;
  std::string describe() const override;

  Variable& weight() { return weight_; }  // [out, in / groups, kH, kW]
  Variable& bias() { return bias_; }      // [out], undefined without bias
  const Conv2dConfig& config() const { return config_; }

 private:
  Conv2dConfig config_;
  Variable weight_;
  Variable bias_;
};

}  // namespace imerge::layers
