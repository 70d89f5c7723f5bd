// 2-D convolution on the CPU through oneDNN: forward, backward-data, backward-weights (+bias).
//
// Contract: tensors are plain contiguous float32 NCHW (activations) and OIHW (weights, that is
// [C_out, C_in / groups, kH, kW], read by oneDNN as goihw when groups > 1), exactly PyTorch's
// layout, so callers never see oneDNN's blocked formats. Inside, each primitive may compute in
// the blocked layout oneDNN prefers (format_tag::any) with reorders from and to NCHW around it;
// which is used is ConvLayout (below), chosen by measurement: Blocked. Forward + backward at 2
// threads on this project's 2-core AVX2 machine (min of 3 runs, ms; PyTorch 1.13 alongside):
//   3x3 64->64 56x56 batch 16:   Blocked 78,   Plain 110,  PyTorch 89
//   3x3 128->128 56x56 batch 16: Blocked 293,  Plain 372,  PyTorch 311
//   3x3 256->256 56x56 batch 16: Blocked 1111, Plain 1267, PyTorch 1291
//   Fashion-MNIST 32->64 28x28 batch 64: Blocked 39, Plain 57, PyTorch 41
// A first layer (1 or 3 input channels) keeps its source plain even when Blocked, because
// oneDNN's own choice for it is plain; its weight gradient then reads it plain as well.
//
// Cost model of a call in the steady state: a lookup in a cache keyed by shape and options (the
// primitive and its reorders are built on the first call for a key, never again), the reorders
// of this call's data, and the convolution. Nothing derived from the weights is cached, because
// the weights change at every optimizer step. Every buffer a call needs (reordered copies, the
// primitive's scratchpad) is a Tensor from our caching allocator: primitives are built with
// scratchpad_mode::user, so oneDNN allocates no data buffers per call (only the small memory
// handles that wrap ours).
#pragma once

#include <array>
#include <cstdint>

#include "core/kernel_params.h"
#include "core/tensor.h"

namespace imerge::cpu {

// The shared types of core/kernel_params.h, under the names the kernels' callers know.
using imerge::Conv2dGrads;
using imerge::Conv2dParams;

// How the convolution primitives lay out data while computing.
enum class ConvLayout {
  // oneDNN picks (format_tag::any, usually nChw16c / OIhw16i16o on AVX-512) and we reorder
  // from and to plain NCHW around each primitive; PyTorch 1.13 does the same.
  Blocked,
  // The primitives read and write plain NCHW/OIHW directly: no reorders, but oneDNN falls back
  // to its im2col + GEMM kernels for most shapes.
  Plain,
};

// The layout used by new primitives: Blocked unless IMERGE_CONV_LAYOUT=plain is set in the
// environment (read once; for measurements). setConvLayout overrides it, for tests and benches.
ConvLayout convLayout();
void setConvLayout(ConvLayout layout);

// Which algorithm a convolution runs: a 3x3, stride-1 one may run Winograd (core/cpu/winograd.h),
// a 1x1, stride-1 unpadded one sgemm per image (core/cpu/pointwise_conv.h); every other shape
// always runs oneDNN's direct kernels.
enum class ConvAlgorithm {
  // Winograd F(4x4, 3x3) where it was measured faster than oneDNN's direct kernels (both the
  // input and the output have at least 64 channels, and the batch at least 64 output tiles)
  // unless oneDNN has a Winograd kernel of its own for the pass on this CPU and picks it
  // (convolution_auto; AVX-512 only), sgemm for the 1x1 layers, oneDNN's choice elsewhere.
  Auto,
  // oneDNN's direct kernels everywhere (IMERGE_CONV_ALGORITHM=direct; for measurements).
  Direct,
  // Winograd wherever winogradApplies, whatever the channels (IMERGE_CONV_ALGORITHM=winograd;
  // lets the tests check it on small shapes), and sgemm for every 1x1 stride-1 layer.
  Winograd,
};
ConvAlgorithm convAlgorithm();
void setConvAlgorithm(ConvAlgorithm algorithm);

// Checks the operands and returns the output shape [N, C_out, H_out, W_out]. Throws
// imerge::Error naming "conv2d", the offending tensor and its shape. `bias` may be undefined.
Shape conv2dOutputShape(const Tensor& input, const Tensor& weight, const Tensor& bias,
                        const Conv2dParams& params);

// input [N, C_in, H, W], weight [C_out, C_in / groups, kH, kW], bias [C_out] or undefined
// -> output [N, C_out, H_out, W_out]
Tensor conv2dForward(const Tensor& input, const Tensor& weight, const Tensor& bias,
                     const Conv2dParams& params);

// All gradients asked for in one call. Doing them together lets backward-data and
// backward-weights share one reorder of gradOutput when both want the same blocked layout.
// gradOutput [N, C_out, H_out, W_out]; input and weight are the forward's operands.
Conv2dGrads conv2dBackward(const Tensor& input, const Tensor& weight, const Tensor& gradOutput,
                           const Conv2dParams& params, bool needInput, bool needWeight,
                           bool needBias);

// gradOutput [N, C_out, H_out, W_out], weight [C_out, C_in / groups, kH, kW]
// -> gradInput of inputShape [N, C_in, H, W]
Tensor conv2dBackwardData(const Tensor& gradOutput, const Tensor& weight, const Shape& inputShape,
                          const Conv2dParams& params);

// input [N, C_in, H, W], gradOutput [N, C_out, H_out, W_out]
// -> gradWeight of weightShape [C_out, C_in / groups, kH, kW], and gradBias [C_out] when
// withBias (computed by the same primitive, in the same pass over gradOutput).
Conv2dGrads conv2dBackwardWeights(const Tensor& input, const Tensor& gradOutput,
                                  const Shape& weightShape, bool withBias,
                                  const Conv2dParams& params);

}  // namespace imerge::cpu
