// Local response normalisation across channels on the CPU, forward and backward, matching
// PyTorch's nn.LocalResponseNorm exactly:
//
//   scale[c] = k + alpha / size * sum_{j = c - size/2}^{c + (size-1)/2} x[j]^2   (zeros outside)
//   out[c]   = x[c] * scale[c]^-beta
//
// oneDNN's lrn_across_channels sums over c - (size-1)/2 .. c + (size-1)/2, which is PyTorch's
// window only for odd sizes (for size 4 it sums 3 channels, PyTorch 4), so odd sizes run on
// oneDNN and even sizes on a direct OpenMP loop. Input: plain NCHW float32.
#pragma once

#include <cstdint>

#include "core/kernel_params.h"
#include "core/tensor.h"

namespace imerge::cpu {

// core/kernel_params.h. Here the workspace is oneDNN's (odd sizes) or the scale [N, C, H, W].
using imerge::LrnParams;
using imerge::LrnResult;

// The input checks every device's LRN kernels share, with the same words (the device is each
// kernel's to check): a defined float32 [N, C, H, W] input and a positive size. Throws
// imerge::Error naming `op`.
void checkLrnInput(const char* op, const Tensor& input, const LrnParams& params);

// keepWorkspace: the backward will follow (training); otherwise the workspace is undefined.
LrnResult lrnForward(const Tensor& input, const LrnParams& params, bool keepWorkspace);
// input and workspace from the forward; gradOutput [N, C, H, W] -> gradInput [N, C, H, W].
Tensor lrnBackward(const Tensor& gradOutput, const Tensor& input, const Tensor& workspace,
                   const LrnParams& params);

}  // namespace imerge::cpu
