// 2-D convolution on a CUDA device through cuDNN, with the contract of core/cpu/convolution.h:
// plain NCHW activations, OIHW weights ([C_out, C_in / groups, kH, kW]), PyTorch's stride,
// padding, dilation and groups, an optional bias [C_out].
//
// Algorithms: for each (device, shapes, params, bias presence, cuda::cudaSettings()) and each
// direction (forward, backward data, backward filter), the first call that needs the direction
// runs cuDNN's search (cudnnFind*AlgorithmEx) on its operands, writing into scratch outputs,
// with a workspace of at most convWorkspaceLimitBytes (less when memory is short); it keeps the
// fastest algorithm that fits (only deterministic ones when settings.deterministic) and caches
// the choice and the descriptors; later calls only look it up. Workspaces come from the device's
// caching allocator, so the steady state allocates nothing. TF32 math when settings.allowTf32,
// plain FMA float32 math otherwise (see convolution.cu).
//
// Every call is queued on the tensors' device stream and returns without waiting.
#pragma once

#include "core/cpu/convolution.h"
#include "core/tensor.h"

namespace imerge::cuda {

using cpu::Conv2dGrads;
using cpu::Conv2dParams;

// input [N, C_in, H, W], weight [C_out, C_in / groups, kH, kW], bias [C_out] or undefined
// -> output [N, C_out, H_out, W_out]. Operands are checked by cpu::conv2dOutputShape (the same
// messages as on the CPU) and must all be on one CUDA device.
Tensor conv2dForward(const Tensor& input, const Tensor& weight, const Tensor& bias,
                     const Conv2dParams& params);

// The gradients asked for; the others are left undefined. gradOutput [N, C_out, H_out, W_out].
Conv2dGrads conv2dBackward(const Tensor& input, const Tensor& weight, const Tensor& gradOutput,
                           const Conv2dParams& params, bool needInput, bool needWeight,
                           bool needBias);

// How many algorithm searches have run in this process (one per new shape, settings and
// direction): a training loop's steady state adds none.
size_t convAlgorithmSearches();

}  // namespace imerge::cuda
