// Local response normalisation across channels on a CUDA device, with the contract and the
// exact PyTorch window of core/cpu/lrn.h. Odd sizes within cuDNN's limits (size <= 16,
// k >= 1e-5, beta >= 0.01; AlexNet's 5 among them) run on cuDNN's cudnnLRNCrossChannel*, whose
// window is PyTorch's for odd sizes only and which takes PyTorch's alpha unchanged (it divides
// by the size itself); every other case runs on an own kernel (core/cuda/lrn_math.h), as on
// the CPU. The path is a function of the options alone, so forward and backward agree on it.
//
// The workspace is what the backward of the path taken needs: for cuDNN, the output itself
// (the same storage, no copy: do not modify the output in place before the backward); for the
// own kernel, the scale k + alpha / size * sum x^2 [N, C, H, W].
//
// Every call is queued on the tensors' device stream and returns without waiting.
#pragma once

#include "core/cpu/lrn.h"
#include "core/tensor.h"

namespace imerge::cuda {

using cpu::LrnParams;
using cpu::LrnResult;

LrnResult lrnForward(const Tensor& input, const LrnParams& params, bool keepWorkspace);
Tensor lrnBackward(const Tensor& gradOutput, const Tensor& input, const Tensor& workspace,
                   const LrnParams& params);

}  // namespace imerge::cuda
