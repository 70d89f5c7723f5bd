// 2-D pooling on the CPU, forward and backward, over plain NCHW float32 tensors.
//
// Output sizes follow PyTorch, ceil_mode included. Average pooling runs on oneDNN primitives,
// built once per shape and options; the extra right padding ceil_mode needs is passed to oneDNN
// as padding_r. Everything oneDNN cannot express, or runs slowly, is a direct OpenMP loop over
// precomputed windows, one (n, c) plane per task:
//  - max pooling: oneDNN 2.6 has only its reference kernel ("simple_nchw") for plain NCHW,
//    measured 3-5x slower than PyTorch on [16, 64..256, 56, 56] at 2 threads; the loop beats
//    PyTorch. Its workspace is the argmax per output, as PyTorch's indices.
//  - adaptive average pooling: its windows vary in size, and where they do not (global
//    pooling, ResNet's head) oneDNN's plain-NCHW kernel measured 17 ms per step on
//    [16, 256, 56, 56] (forward and backward) against under 4 ms for the loop;
//  - ceil-mode average pooling that counts padding, where PyTorch's divisor stops at the real
//    padding while oneDNN's would include the extra ceil-mode padding too.
//
// The kernels validate their inputs and name the op in their messages ("maxPool2d: ..."), so
// the autograd ops call them directly.
#pragma once

#include <array>
#include <cstdint>

#include "core/kernel_params.h"
#include "core/tensor.h"

namespace imerge::cpu {

// The shared types of core/kernel_params.h, under the names the kernels' callers know.
using imerge::MaxPool2dResult;
using imerge::Pool2dParams;

// PyTorch's pooled size of one axis: floor or ceil of (size + 2 * padding - kernel) / stride,
// plus one, less one in ceil mode if the last window would start beyond the input and its left
// padding (it would see only right padding).
int64_t pooledSize(int64_t inputSize, int64_t kernel, int64_t stride, int64_t padding,
                   bool ceilMode);
// The same with `padding` before the input and `paddingEnd` after it (PyTorch's
// pooling_output_shape_pad_lr): size + padding + paddingEnd replaces size + 2 * padding.
int64_t pooledSize(int64_t inputSize, int64_t kernel, int64_t stride, int64_t padding,
                   int64_t paddingEnd, bool ceilMode);

// The checks every device's pooling kernels share, with the same words on every device; each
// kernel then checks that its operands are on its own device. They throw imerge::Error naming
// `op` ("maxPool2d", "avgPool2d backward", ...) and the shapes at fault.
//
// A pooling input: defined, float32, [N, C, H, W], with a non-empty H x W plane (an empty plane
// leaves every window empty, and the kernels would read outside the input).
void checkPoolInput(const char* op, const Tensor& input);
// The output shape [N, C, H_out, W_out] of pooling an input of `inputShape` (4 dimensions),
// after checking the options: positive kernel and stride, padding at most half the kernel on
// each side (a window always covers an input element, as PyTorch requires), kernel within the
// padded input.
Shape pooledShape(const char* op, const Shape& inputShape, const Pool2dParams& params);
// A backward's gradOutput: defined, float32 and of `outputShape`.
void checkPoolGradOutput(const char* op, const Tensor& gradOutput, const Shape& outputShape);
// The output shape of adaptive average pooling `input` (checked by checkPoolInput first) to
// `outputSize`, which must be positive.
Shape adaptivePooledShape(const Tensor& input, std::array<int64_t, 2> outputSize);
// adaptiveAvgPool2dBackward's operands: a float32 gradOutput [N, C, H_out, W_out] with a
// non-empty plane, N and C those of `inputShape` (4 dimensions).
void checkAdaptivePoolGradOutput(const Tensor& gradOutput, const Shape& inputShape);

// input [N, C, H, W] -> [N, C, H_out, W_out]. keepWorkspace: a backward will follow.
MaxPool2dResult maxPool2dForward(const Tensor& input, const Pool2dParams& params,
                                 bool keepWorkspace);
// gradOutput [N, C, H_out, W_out] -> gradInput inputShape; workspace from the forward.
Tensor maxPool2dBackward(const Tensor& gradOutput, const Tensor& workspace, const Shape& inputShape,
                         const Pool2dParams& params);

// countIncludePad: divide by the window size including padding (PyTorch's default) or by the
// number of input elements the window covers.
Tensor avgPool2dForward(const Tensor& input, const Pool2dParams& params, bool countIncludePad);
Tensor avgPool2dBackward(const Tensor& gradOutput, const Shape& inputShape,
                         const Pool2dParams& params, bool countIncludePad);

// input [N, C, H, W] -> [N, C, outputSize[0], outputSize[1]], averaging over PyTorch's adaptive
// windows: start = floor(i * H / H_out), end = ceil((i + 1) * H / H_out).
Tensor adaptiveAvgPool2dForward(const Tensor& input, std::array<int64_t, 2> outputSize);
Tensor adaptiveAvgPool2dBackward(const Tensor& gradOutput, const Shape& inputShape);

}  // namespace imerge::cpu
