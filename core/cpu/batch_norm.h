// Batch normalisation over plain NCHW float32 tensors on the CPU, forward and backward.
//
// Statistics are per channel over N, H and W. The kernels are hand-written OpenMP loops, one
// channel per task: a channel of a [16, 64, 56, 56] batch is 200 KB, so the passes after the
// first find it in L2. oneDNN 2.6 offers only its generic "ncsp_bnorm" for plain NCHW; measured
// on that shape with one thread, its training forward took 8.9 ms against 2.3 ms here (PyTorch
// 1.13: 11.9 ms). Sums are accumulated per image row in float and across rows in double.
//
// An undefined weight means gamma = 1 and an undefined bias beta = 0.
#pragma once

#include "core/kernel_params.h"
#include "core/tensor.h"

namespace imerge::cpu {

struct BatchNormTrainingResult {
  Tensor output;    // [N, C, H, W]
  Tensor mean;      // [C] batch mean
  Tensor variance;  // [C] batch variance, biased (divided by N*H*W), as used to normalise
};

// The operand checks every device's batch-norm kernels share, with the same words (each kernel
// then checks that its operands are on its device). They throw imerge::Error naming `op`
// ("batchNorm2d", "batchNorm2d backward") and the operand at fault.
//
// A defined float32 [N, C, H, W] input.
void checkBatchNormInput(const char* op, const Tensor& input);
// A float32 [C] tensor for input's C channels, called `what` in messages ("weight"); undefined
// passes when `optional`.
void checkBatchNormPerChannel(const char* op, const char* what, const Tensor& tensor,
                              const Tensor& input, bool optional);
// A backward's gradOutput: defined, float32 and of input's shape.
void checkBatchNormGradOutput(const char* op, const Tensor& gradOutput, const Tensor& input);

// Normalises with the batch's own statistics; with reluAfter the output is relu of that, in
// the same pass (BN + ReLU fused: one read and one write of the activation fewer).
BatchNormTrainingResult batchNormTrainingForward(const Tensor& input, const Tensor& weight,
                                                 const Tensor& bias, float eps,
                                                 bool reluAfter = false);

// Normalises with given statistics (the running ones, in evaluation).
Tensor batchNormInferenceForward(const Tensor& input, const Tensor& weight, const Tensor& bias,
                                 const Tensor& mean, const Tensor& variance, float eps);

using imerge::BatchNormGradients;  // core/kernel_params.h

// statisticsFromBatch: mean and variance were the batch's own (training), so the gradient flows
// through them too; otherwise they were constants and the input's gradient is a per-channel
// scale of gradOutput. A defined reluOutput (the fused forward's output) makes this the backward
// of relu(batchNorm(x)): gradOutput passes only where reluOutput > 0, read in the same passes.
BatchNormGradients batchNormBackward(const Tensor& gradOutput, const Tensor& input,
                                     const Tensor& weight, const Tensor& mean,
                                     const Tensor& variance, float eps, bool statisticsFromBatch,
                                     const Tensor& reluOutput = Tensor());

// running = (1 - momentum) * running + momentum * batch statistic, where the variance is made
// unbiased (times n / (n - 1), n = N*H*W) first, as PyTorch does.
void updateRunningStatistics(Tensor& runningMean, Tensor& runningVar, const Tensor& batchMean,
                             const Tensor& batchVariance, float momentum, int64_t count);

}  // namespace imerge::cpu
