// 2-D pooling on a CUDA device, forward and backward, with the contract of core/cpu/pooling.h
// (PyTorch's output sizes, ceil_mode, count_include_pad and adaptive windows; the max-pooling
// workspace is the winner's int32 index within its H*W plane, as on the CPU).
//
// These are own kernels, as PyTorch's are: cuDNN's pooling cannot express ceil mode's extra
// right padding nor adaptive windows, and the argmax workspace spares the max backward cuDNN's
// second pass over the input. Backward kernels gather (each input element sums the gradients of
// the windows that hold it, or that picked it, in increasing output order): deterministic, no
// atomics, and the CPU's summation order. The per-element arithmetic lives in
// core/cuda/pooling_math.h, which the CPU tests also run against the CPU kernels.
//
// Every call is queued on the tensors' device stream and returns without waiting.
#pragma once

#include <array>

#include "core/cpu/pooling.h"
#include "core/tensor.h"

namespace imerge::cuda {

using cpu::MaxPool2dResult;
using cpu::Pool2dParams;

MaxPool2dResult maxPool2dForward(const Tensor& input, const Pool2dParams& params,
                                 bool keepWorkspace);
Tensor maxPool2dBackward(const Tensor& gradOutput, const Tensor& workspace, const Shape& inputShape,
                         const Pool2dParams& params);

Tensor avgPool2dForward(const Tensor& input, const Pool2dParams& params, bool countIncludePad);
Tensor avgPool2dBackward(const Tensor& gradOutput, const Shape& inputShape,
                         const Pool2dParams& params, bool countIncludePad);

Tensor adaptiveAvgPool2dForward(const Tensor& input, std::array<int64_t, 2> outputSize);
Tensor adaptiveAvgPool2dBackward(const Tensor& gradOutput, const Shape& inputShape);

}  // namespace imerge::cuda
