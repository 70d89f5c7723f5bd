// 1x1, stride-1 convolutions on the CPU as matrix products, straight on plain NCHW tensors.
//
// Why: a 1x1 convolution of image n is the product W [K, C] x X[n] [C, H*W], so sgemm
// (core/cpu/gemm.h) computes it in place on PyTorch's layout. oneDNN's direct kernels compute
// in a blocked layout and need a reorder of every operand from and to NCHW around each call;
// on ResNet-50's 56x56 and 28x28 layers the products here ran 1.2x-2.1x as fast as oneDNN with
// its reorders (docs/performance.md has the per-shape timings).
//
//   forward          Y[n]  = W x X[n]               for each image n
//   data gradient    dX[n] = W^T x dY[n]
//   weight gradient  dW    = sum over n of dY[n] x X[n]^T
//
// Contract: plain contiguous float32 NCHW / OIHW tensors, as core/cpu/convolution.h; callers
// check the operands and decide when to use it (pointwiseApplies says when it can;
// core/cpu/convolution.cpp uses it for planes of 16x16 and more, where it was faster).
#pragma once

#include "core/kernel_params.h"
#include "core/shape.h"
#include "core/tensor.h"

namespace imerge::cpu {

// True for weight [K, C, 1, 1] with stride 1, no padding and one group (dilation does not
// matter for a 1x1 kernel).
bool pointwiseApplies(const Shape& weight, const Conv2dParams& params);

// input [N, C, H, W], weight [K, C, 1, 1], bias [K] or undefined -> output [N, K, H, W]
Tensor pointwiseConv2dForward(const Tensor& input, const Tensor& weight, const Tensor& bias);

// gradOutput [N, K, H, W], weight [K, C, 1, 1] -> gradInput [N, C, H, W]
Tensor pointwiseConv2dBackwardData(const Tensor& gradOutput, const Tensor& weight,
                                   const Shape& inputShape);

// input [N, C, H, W], gradOutput [N, K, H, W] -> gradWeight [K, C, 1, 1]
Tensor pointwiseConv2dBackwardWeights(const Tensor& input, const Tensor& gradOutput,
                                      const Shape& weightShape);

}  // namespace imerge::cpu
