// Weight initialisers (PyTorch's nn.init), drawing from a Generator so runs repeat exactly.
//
// fan_in and fan_out follow PyTorch: for a weight [out, in, kH, kW], fan_in = in * kH * kW and
// fan_out = out * kH * kW; for [out, in], fan_in = in.
#pragma once

#include <utility>

#include "core/random.h"
#include "core/tensor.h"

namespace imerge::layers::init {

enum class FanMode { FanIn, FanOut };

std::pair<int64_t, int64_t> fanInAndOut(const Tensor& weight);

// Gain for ReLU is sqrt(2); `negativeSlope` gives leaky ReLU's sqrt(2 / (1 + slope^2)).
void kaimingUniform(Tensor& weight, Generator& generator, float negativeSlope = 0.0f,
                    FanMode mode = FanMode::FanIn);
void kaimingNormal(Tensor& weight, Generator& generator, float negativeSlope = 0.0f,
                   FanMode mode = FanMode::FanIn);
void xavierUniform(Tensor& weight, Generator& generator, float gain = 1.0f);
void xavierNormal(Tensor& weight, Generator& generator, float gain = 1.0f);

// PyTorch's default for Conv2d and Linear: kaiming_uniform(a=sqrt(5)) on the weight, which is
// uniform(-1/sqrt(fan_in), 1/sqrt(fan_in)), and the same bound for the bias.
void defaultLayerInit(Tensor& weight, Tensor* bias, Generator& generator);

}  // namespace imerge::layers::init
