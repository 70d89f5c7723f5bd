// Local response normalisation across channels on a CUDA device, with the contract and the
// exact PyTorch window of core/cpu/lrn.h. Odd sizes (AlexNet's 5) run on cuDNN's
// cudnnLRNCrossChannel*, whose window is PyTorch's for odd sizes only; even sizes run on an own
// kernel, as on the CPU. The workspace is what the backward of the path taken needs (the output
// for cuDNN, the scale for the own kernel).
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
