#include "core/cpu/batch_norm.h"

#include <cmath>

namespace imerge::cpu {

namespace {

// The layout every loop below walks: channel c of image n is the contiguous row
// data[(n * channels + c) * planeSize, + planeSize).
struct Layout {
  int64_t batch;
  int64_t channels;
  int64_t planeSize;                                   // H * W
  int64_t count() const { return batch * planeSize; }  // elements per channel
  int64_t row(int64_t n, int64_t c) const { return (n * channels + c) * planeSize; }
};

Layout checkInput(const char* op, const Tensor& input) {
  checkBatchNormInput(op, input);
  return {input.dim(0), input.dim(1), input.dim(2) * input.dim(3)};
}

// Per-channel gamma and beta with the defaults for undefined tensors.
float valueOr(const Tensor& tensor, int64_t c, float fallback) {
  return tensor.defined() ? tensor.data<float>()[c] : fallback;
}

// y = x * scale + shift over one channel of every image, then relu(y) when asked (as
// cpu::reluForward: y > 0 ? y : 0, so NaN becomes 0).
void affineChannel(const float* x, float* y, const Layout& layout, int64_t c, float scale,
                   float shift, bool reluAfter) {
  for (int64_t n = 0; n < layout.batch; ++n) {
    const float* xRow = x + layout.row(n, c);
    float* yRow = y + layout.row(n, c);
    if (reluAfter) {
#pragma omp simd
      for (int64_t i = 0; i < layout.planeSize; ++i) {
        const float value = xRow[i] * scale + shift;
        yRow[i] = value > 0.0f ? value : 0.0f;
      }
    } else {
#pragma omp simd
      for (int64_t i = 0; i < layout.planeSize; ++i) yRow[i] = xRow[i] * scale + shift;
    }
  }
}

struct BackwardOperands {
  const float* x;     // [N, C, H, W]
  const float* dy;    // [N, C, H, W]
  const float* relu;  // [N, C, H, W] the fused relu's output, or null
  float* dx;          // [N, C, H, W]
  float* dGamma;      // [C]
  float* dBeta;       // [C]
  Layout layout;
  bool statisticsFromBatch;
};

// The gradient that reaches the batch norm: dy itself, or with a fused relu dy where relu's
// output is positive and 0 elsewhere (as cpu::reluBackward).
template <bool kRelu>
float passedGradient(const float* dyRow, const float* reluRow, int64_t i) {
  const float dy = dyRow[i];  // loaded either way, so the select vectorises as a blend
  if constexpr (kRelu) return reluRow[i] > 0.0f ? dy : 0.0f;
  return dy;
}

// Channel c's share of batchNormBackward.
template <bool kRelu>
void backwardChannel(const BackwardOperands& op, int64_t c, float channelMean, float invStd,
                     float gamma) {
  const Layout& layout = op.layout;
  // sumGrad = sum(g), sumGradCentred = sum(g * (x - mean)) over the channel, g the gradient
  // that passed the relu (dy without one).
  double sumGrad = 0, sumGradCentred = 0;
  for (int64_t n = 0; n < layout.batch; ++n) {
    const int64_t row = layout.row(n, c);
    const float* xRow = op.x + row;
    const float* dyRow = op.dy + row;
    const float* reluRow = kRelu ? op.relu + row : nullptr;
    float rowGrad = 0, rowGradCentred = 0;
#pragma omp simd reduction(+ : rowGrad, rowGradCentred)
    for (int64_t i = 0; i < layout.planeSize; ++i) {
      const float g = passedGradient<kRelu>(dyRow, reluRow, i);
      rowGrad += g;
      rowGradCentred += g * (xRow[i] - channelMean);
    }
    sumGrad += rowGrad;
    sumGradCentred += rowGradCentred;
  }
  op.dBeta[c] = static_cast<float>(sumGrad);
  op.dGamma[c] = static_cast<float>(sumGradCentred * invStd);

  // dx = gradScale * g + centredScale * (x - mean) + shift: with batch statistics the mean and
  // variance depend on x, which adds the two terms beside gradScale * g.
  const double count = static_cast<double>(layout.count());
  const float gradScale = gamma * invStd;
  float centredScale = 0, shift = 0;
  if (op.statisticsFromBatch) {
    centredScale = static_cast<float>(-gamma * invStd * invStd * invStd * sumGradCentred / count);
    shift = static_cast<float>(-gamma * invStd * sumGrad / count);
  }
  const float constant = shift - centredScale * channelMean;
  for (int64_t n = 0; n < layout.batch; ++n) {
    const int64_t row = layout.row(n, c);
    const float* xRow = op.x + row;
    const float* dyRow = op.dy + row;
    const float* reluRow = kRelu ? op.relu + row : nullptr;
    float* dxRow = op.dx + row;
#pragma omp simd
    for (int64_t i = 0; i < layout.planeSize; ++i) {
      dxRow[i] =
          gradScale * passedGradient<kRelu>(dyRow, reluRow, i) + centredScale * xRow[i] + constant;
    }
  }
}

}  // namespace

void checkBatchNormInput(const char* op, const Tensor& input) {
  IMERGE_CHECK(input.defined() && input.dtype() == DType::Float32 && input.ndim() == 4, op,
               ": input ", input.defined() ? input.describe() : std::string("(undefined)"),
               " must be float32 [N, C, H, W]");
}

void checkBatchNormPerChannel(const char* op, const char* what, const Tensor& tensor,
                              const Tensor& input, bool optional) {
  if (optional && !tensor.defined()) return;
  IMERGE_CHECK(tensor.defined(), op, ": ", what, " is undefined");
  IMERGE_CHECK(
      tensor.dtype() == DType::Float32 && tensor.ndim() == 1 && tensor.dim(0) == input.dim(1), op,
      ": ", what, " ", tensor.describe(), " does not match ", input.dim(1), " channels of input ",
      input.describe());
}

void checkBatchNormGradOutput(const char* op, const Tensor& gradOutput, const Tensor& input) {
  IMERGE_CHECK(gradOutput.defined() && gradOutput.shape() == input.shape() &&
                   gradOutput.dtype() == DType::Float32,
               op, ": gradient of the output ",
               gradOutput.defined() ? gradOutput.describe() : std::string("(undefined)"),
               " does not match input ", input.describe());
}

BatchNormTrainingResult batchNormTrainingForward(const Tensor& input, const Tensor& weight,
                                                 const Tensor& bias, float eps, bool reluAfter) {
  const Layout layout = checkInput("batchNorm2d", input);
  checkBatchNormPerChannel("batchNorm2d", "weight", weight, input, true);
  checkBatchNormPerChannel("batchNorm2d", "bias", bias, input, true);
  IMERGE_CHECK(layout.count() > 0, "batchNorm2d: input ", input.describe(), " has no elements");

  BatchNormTrainingResult result{Tensor::emptyLike(input), Tensor::empty({layout.channels}),
                                 Tensor::empty({layout.channels})};
  const float* x = input.data<float>();             // [N, C, H, W]
  float* y = result.output.data<float>();           // [N, C, H, W]
  float* mean = result.mean.data<float>();          // [C]
  float* variance = result.variance.data<float>();  // [C]
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < layout.channels; ++c) {
    double sum = 0;
    for (int64_t n = 0; n < layout.batch; ++n) {
      const float* row = x + layout.row(n, c);
      float rowSum = 0;
#pragma omp simd reduction(+ : rowSum)
      for (int64_t i = 0; i < layout.planeSize; ++i) rowSum += row[i];
      sum += rowSum;
    }
    const float channelMean = static_cast<float>(sum / layout.count());
    // A second pass over centred values: sum(x^2) - n*mean^2 cancels badly when |mean| >> std.
    double squares = 0;
    for (int64_t n = 0; n < layout.batch; ++n) {
      const float* row = x + layout.row(n, c);
      float rowSquares = 0;
#pragma omp simd reduction(+ : rowSquares)
      for (int64_t i = 0; i < layout.planeSize; ++i) {
        const float centred = row[i] - channelMean;
        rowSquares += centred * centred;
      }
      squares += rowSquares;
    }
    const float channelVariance = static_cast<float>(squares / layout.count());
    mean[c] = channelMean;
    variance[c] = channelVariance;
    const float scale = valueOr(weight, c, 1.0f) / std::sqrt(channelVariance + eps);
    affineChannel(x, y, layout, c, scale, valueOr(bias, c, 0.0f) - channelMean * scale, reluAfter);
  }
  return result;
}

Tensor batchNormInferenceForward(const Tensor& input, const Tensor& weight, const Tensor& bias,
                                 const Tensor& mean, const Tensor& variance, float eps) {
  const Layout layout = checkInput("batchNorm2d", input);
  checkBatchNormPerChannel("batchNorm2d", "weight", weight, input, true);
  checkBatchNormPerChannel("batchNorm2d", "bias", bias, input, true);
  checkBatchNormPerChannel("batchNorm2d", "running mean", mean, input, false);
  checkBatchNormPerChannel("batchNorm2d", "running variance", variance, input, false);
  Tensor output = Tensor::emptyLike(input);
  const float* x = input.data<float>();  // [N, C, H, W]
  float* y = output.data<float>();       // [N, C, H, W]
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < layout.channels; ++c) {
    const float channelMean = mean.data<float>()[c];
    const float scale = valueOr(weight, c, 1.0f) / std::sqrt(variance.data<float>()[c] + eps);
    affineChannel(x, y, layout, c, scale, valueOr(bias, c, 0.0f) - channelMean * scale,
                  /*reluAfter=*/false);
  }
  return output;
}

BatchNormGradients batchNormBackward(const Tensor& gradOutput, const Tensor& input,
                                     const Tensor& weight, const Tensor& mean,
                                     const Tensor& variance, float eps, bool statisticsFromBatch,
                                     const Tensor& reluOutput) {
  const Layout layout = checkInput("batchNorm2d backward", input);
  checkBatchNormGradOutput("batchNorm2d backward", gradOutput, input);
  if (reluOutput.defined()) {
    IMERGE_CHECK(reluOutput.shape() == input.shape() && reluOutput.dtype() == DType::Float32,
                 "batchNorm2d backward: relu output ", reluOutput.describe(),
                 " does not match input ", input.describe());
  }
  checkBatchNormPerChannel("batchNorm2d backward", "weight", weight, input, true);
  checkBatchNormPerChannel("batchNorm2d backward", "mean", mean, input, false);
  checkBatchNormPerChannel("batchNorm2d backward", "variance", variance, input, false);

  BatchNormGradients gradients{Tensor::emptyLike(input), Tensor::empty({layout.channels}),
                               Tensor::empty({layout.channels})};
  const float* x = input.data<float>();                                           // [N, C, H, W]
  const float* dy = gradOutput.data<float>();                                     // [N, C, H, W]
  float* dx = gradients.input.data<float>();                                      // [N, C, H, W]
  float* dGamma = gradients.weight.data<float>();                                 // [C]
  float* dBeta = gradients.bias.data<float>();                                    // [C]
  const float* relu = reluOutput.defined() ? reluOutput.data<float>() : nullptr;  // [N, C, H, W]
  const BackwardOperands operands{x, dy, relu, dx, dGamma, dBeta, layout, statisticsFromBatch};
  // Two instantiations, so that neither inner loop tests for the relu (GCC left the one that
  // did scalar).
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < layout.channels; ++c) {
    const float channelMean = mean.data<float>()[c];
    const float invStd = 1.0f / std::sqrt(variance.data<float>()[c] + eps);
    const float gamma = valueOr(weight, c, 1.0f);
    if (relu != nullptr) {
      backwardChannel<true>(operands, c, channelMean, invStd, gamma);
    } else {
      backwardChannel<false>(operands, c, channelMean, invStd, gamma);
    }
  }
  return gradients;
}

void updateRunningStatistics(Tensor& runningMean, Tensor& runningVar, const Tensor& batchMean,
                             const Tensor& batchVariance, float momentum, int64_t count) {
  IMERGE_CHECK(
      runningMean.shape() == batchMean.shape() && runningVar.shape() == batchVariance.shape(),
      "batchNorm2d: running mean ", runningMean.describe(), " and running variance ",
      runningVar.describe(), " must match the batch statistics ", batchMean.describe());
  // PyTorch divides by zero here for a single element per channel; keep the biased value.
  const float bessel = count > 1 ? static_cast<float>(count) / static_cast<float>(count - 1) : 1.0f;
  float* runMean = runningMean.data<float>();
  float* runVar = runningVar.data<float>();
  const float* mean = batchMean.data<float>();
  const float* variance = batchVariance.data<float>();
  for (int64_t c = 0; c < runningMean.numel(); ++c) {
    runMean[c] = (1.0f - momentum) * runMean[c] + momentum * mean[c];
    runVar[c] = (1.0f - momentum) * runVar[c] + momentum * variance[c] * bessel;
  }
}

}  // namespace imerge::cpu
