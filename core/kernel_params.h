// The parameter and result types of the kernels, shared by core/backend.h and every backend
// (core/cpu/, core/cuda/), so that the interface needs no device's headers. Conventions are
// PyTorch's throughout; each device's kernel header states its own contract on top of these.
#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "core/tensor.h"

namespace imerge {

// ---- elementwise ---------------------------------------------------------------------------
// The binary ops that broadcast (core/broadcast.h).
enum class BinaryOp { Add, Sub, Mul };

// ---- matrix products -----------------------------------------------------------------------
enum class Transpose { No, Yes };

// ---- convolution ---------------------------------------------------------------------------
// Dilation 1 means a dense kernel. `padding` is added before the input (top, left);
// `paddingEnd`, when given, after it (bottom, right), as oneDNN's padding_r and the end values
// of ONNX's pads. Unset, the padding is symmetric, as PyTorch's. It comes last so that the
// positional initialisers written before it existed keep their meaning.
struct Conv2dParams {
  std::array<int64_t, 2> stride{1, 1};
  std::array<int64_t, 2> padding{0, 0};
  std::array<int64_t, 2> dilation{1, 1};
  int64_t groups = 1;
  std::optional<std::array<int64_t, 2>> paddingEnd{};

  std::array<int64_t, 2> end() const { return paddingEnd.value_or(padding); }
  bool symmetric() const { return end() == padding; }
};

// Gradients of a convolution; a member is undefined when it was not asked for.
struct Conv2dGrads {
  Tensor input;   // [N, C_in, H, W]
  Tensor weight;  // [C_out, C_in / groups, kH, kW]
  Tensor bias;    // [C_out]
};

// ---- pooling -------------------------------------------------------------------------------
// `padding` is added before the input (top, left), `paddingEnd` after it (bottom, right); unset,
// it equals `padding` (symmetric, PyTorch's only kind). Last for the positional initialisers.
struct Pool2dParams {
  std::array<int64_t, 2> kernel{2, 2};   // {height, width}
  std::array<int64_t, 2> stride{2, 2};   // {height, width}
  std::array<int64_t, 2> padding{0, 0};  // before, {height, width}
  bool ceilMode = false;
  std::optional<std::array<int64_t, 2>> paddingEnd{};  // after, {height, width}

  std::array<int64_t, 2> end() const { return paddingEnd.value_or(padding); }
  bool symmetric() const { return end() == padding; }
};

// The output of max pooling and what its backward needs: the workspace records which element
// of each window won. It is undefined when it was not asked for.
struct MaxPool2dResult {
  Tensor output;     // [N, C, H_out, W_out]
  Tensor workspace;  // int32 [N, C, H_out, W_out]: the winner's index within its H*W plane
};

// ---- batch normalisation -------------------------------------------------------------------
struct BatchNormGradients {
  Tensor input;   // [N, C, H, W]
  Tensor weight;  // [C]
  Tensor bias;    // [C]
};

// A training forward and what its backward needs. The saved statistics are in the form the
// backend's own backward takes (the CPU keeps the variance, cuDNN 1 / sqrt(variance + eps)),
// so only that backend's batchNormTrainingBackward may read them.
struct BatchNormTrainingOutput {
  Tensor output;       // [N, C, H, W]
  Tensor savedMean;    // [C] the batch mean
  Tensor savedSpread;  // [C] the batch variance (biased), or its inverse standard deviation
};

// ---- local response normalisation ----------------------------------------------------------
struct LrnParams {
  int64_t size = 5;
  float alpha = 1e-4f;
  float beta = 0.75f;
  float k = 1.0f;
};

struct LrnResult {
  Tensor output;     // [N, C, H, W]
  Tensor workspace;  // what the backward needs (the backend's own choice); undefined if not kept
};

// ---- loss ----------------------------------------------------------------------------------
struct SoftmaxCrossEntropyForward {
  float loss = 0;
  Tensor probabilities;  // [N, C]
};

enum class Reduction { None, Mean, Sum };

// Cross-entropy from log-probabilities with PyTorch's options (core/cpu/nll_loss.h): the loss
// of sample n is (1 - labelSmoothing) w[y_n] (-logp[n, y_n]) + labelSmoothing / C
// sum_c w[c] (-logp[n, c]), 0 where y_n == ignoreIndex; Mean divides the sum by the total
// weight w[y_n] of the samples not ignored (their count without weights).
struct NllLossParams {
  int64_t ignoreIndex = -100;
  float labelSmoothing = 0;
  Reduction reduction = Reduction::Mean;
};

// ---- optimizer -----------------------------------------------------------------------------
// One SGD step of optim/sgd.h (PyTorch's torch.optim.SGD):
//   d = grad + weightDecay * p
//   buf = firstStep ? d : momentum * buf + keep * d          (keep = 1 - dampening)
//   p -= lr * (nesterov ? d + momentum * buf : buf)           (momentum > 0)
//   p -= lr * d                                               (momentum == 0; buf unused)
struct SgdStep {
  float learningRate = 0;
  float momentum = 0;
  float keep = 1;  // 1 - dampening
  float weightDecay = 0;
  bool nesterov = false;
  bool firstStep = false;
};

}  // namespace imerge
