#include "layers/conv2d.h"

#include "layers/init.h"

namespace imerge::layers {

namespace {
Tensor emptyConvWeight(const Conv2dConfig& config) {
  IMERGE_CHECK(config.inChannels > 0 && config.outChannels > 0,
               "Conv2d: channel counts must be "
               "positive, got in ",
               config.inChannels, " out ", config.outChannels);
  const int64_t groups = config.options.groups;
  IMERGE_CHECK(groups > 0 && config.inChannels % groups == 0 && config.outChannels % groups == 0,
               "Conv2d: groups ", groups, " must divide in_channels ", config.inChannels,
               " and out_channels ", config.outChannels);
  return Tensor::empty(
      {config.outChannels, config.inChannels / groups, config.kernel[0], config.kernel[1]});
}
}  // namespace

Conv2d::Conv2d(const Conv2dConfig& config, Generator& generator)
    : config_(config), weight_(registerParameter("weight", emptyConvWeight(config))) {
  Tensor biasValue;
  if (config.bias) {
    biasValue = Tensor::empty({config.outChannels});
    bias_ = registerParameter("bias", biasValue);
  }
  init::defaultLayerInit(weight_.tensor(), config.bias ? &biasValue : nullptr, generator);
}

Conv2d::Conv2d(int64_t inChannels, int64_t outChannels, int64_t kernel, int64_t stride,
               int64_t padding, bool bias, Generator& generator)
    : Conv2d(Conv2dConfig{inChannels,
                          outChannels,
                          {kernel, kernel},
                          autograd::Conv2dOptions{{stride, stride}, {padding, padding}, {1, 1}, 1},
                          bias},
             generator) {}

Variable Conv2d::forward(const Variable& input) {
  runForwardPreHook();
  return autograd::conv2d(input, weight_, bias_, config_.options);
}

std::string Conv2d::describe() const {
  const auto& o = config_.options;
  return detail::concat("Conv2d(", config_.inChannels, ", ", config_.outChannels,
                        ", kernel=", config_.kernel[0], "x", config_.kernel[1],
                        ", stride=", o.stride[0], ", padding=", o.padding[0],
                        o.dilation[0] != 1 ? detail::concat(", dilation=", o.dilation[0]) : "",
                        o.groups != 1 ? detail::concat(", groups=", o.groups) : "",
                        config_.bias ? "" : ", bias=false", ")");
}

}  // namespace imerge::layers
