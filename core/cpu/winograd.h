// Winograd F(4x4, 3x3) convolution on the CPU: forward, backward-data and backward-weights of a
// 3x3, stride-1 convolution, as batched matrix products (Lavin and Gray, "Fast Algorithms for
// Convolutional Neural Networks", 2016).
//
// Why: oneDNN 2.6 has no Winograd kernel for AVX2 (only AVX-512), so its direct 3x3 kernels
// spend 9 multiply-adds per output and input channel; F(4x4, 3x3) computes a 4x4 output tile
// from a 6x6 input tile with 36, that is 2.25 instead of 9 per output: 4x fewer. Each of the 36
// points of the transformed tile is one matrix product over channels (core/cpu/gemm.h).
//
// Algorithm, per 4x4 output tile y, 6x6 input tile d and 3x3 kernel g (B, G, A constant):
//   forward          y  = A^T [ (G g G^T) (.) (B^T d B) ] A
//   weight gradient  dg = G^T [ (A dy A^T) (.) (B^T d B) ] G, summed over tiles
//   data gradient    the forward of dy with the kernel flipped and its channels swapped, padded
//                    by 2 - padding (a stride-1 convolution's transpose is a convolution).
// The transforms' constants (1/4, 1/6, 1/12, 1/24) cost accuracy: results differ from a direct
// convolution by about 1e-6 of the output's scale in float32 (the tests bound it).
//
// Contract: plain contiguous float32 NCHW / OIHW tensors, as core/cpu/convolution.h; callers
// check the operands and decide when to use it (winogradApplies says when it can).
#pragma once

#include "core/kernel_params.h"
#include "core/shape.h"
#include "core/tensor.h"

namespace imerge::cpu {

// True when the convolution of weight shape [K, C, 3, 3] with these parameters can run here:
// a 3x3 kernel, stride 1, no dilation, one group, padding at most 2 and the same on every side (so
// that the data gradient is a convolution with non-negative padding).
bool winogradApplies(const Shape& weight, const Conv2dParams& params);

// The bytes of the temporary buffers a call of the functions below holds at once for weight
// [K, C, 3, 3] and an output (or, for the data gradient, input) of `produced`'s shape: the
// transformed tiles of one block and the transformed kernels.
size_t winogradBufferBytes(const Shape& weight, const Shape& produced);

// The 4x4 tiles covering a batch's [N, C, H, W] output (or, for the data gradient, input).
int64_t winogradTileCount(const Shape& produced);

// input [N, C, H, W], weight [K, C, 3, 3], bias [K] or undefined -> output [N, K, Ho, Wo]
Tensor winogradConv2dForward(const Tensor& input, const Tensor& weight, const Tensor& bias,
                             const Conv2dParams& params, const Shape& outputShape);

// gradOutput [N, K, Ho, Wo], weight [K, C, 3, 3] -> gradInput [N, C, H, W]
Tensor winogradConv2dBackwardData(const Tensor& gradOutput, const Tensor& weight,
                                  const Shape& inputShape, const Conv2dParams& params);

// input [N, C, H, W], gradOutput [N, K, Ho, Wo] -> gradWeight [K, C, 3, 3]
Tensor winogradConv2dBackwardWeights(const Tensor& input, const Tensor& gradOutput,
                                     const Shape& weightShape, const Conv2dParams& params);

}  // namespace imerge::cpu
