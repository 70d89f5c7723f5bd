// Serial loops: a loss reads N labels and N x C log-probabilities once, far less than the
// log-softmax before it, and a fixed summation order keeps the mean reproducible.
#include "core/cpu/nll_loss.h"

#include <cmath>
#include <vector>

namespace imerge::cpu {

namespace {

void checkInputs(const Tensor& logProbabilities, const Tensor& labels, const Tensor& weight,
                 const NllLossParams& params) {
  IMERGE_CHECK(logProbabilities.defined() && logProbabilities.dtype() == DType::Float32 &&
                   logProbabilities.ndim() == 2,
               "crossEntropy: logits must be float32 [N, C], got ",
               logProbabilities.defined() ? logProbabilities.describe() : std::string("undefined"));
  IMERGE_CHECK(labels.defined() && labels.dtype() == DType::Int64 && labels.ndim() == 1,
               "crossEntropy: labels must be int64 [N], got ",
               labels.defined() ? labels.describe() : std::string("undefined"));
  const int64_t batch = logProbabilities.dim(0);
  const int64_t classes = logProbabilities.dim(1);
  IMERGE_CHECK(labels.dim(0) == batch, "crossEntropy: logits ", logProbabilities.describe(),
               " and labels ", labels.describe(), " disagree on the batch size N");
  IMERGE_CHECK(classes > 0, "crossEntropy: logits ", logProbabilities.describe(),
               " have no classes");
  if (weight.defined()) {
    IMERGE_CHECK(weight.dtype() == DType::Float32 && weight.ndim() == 1 && weight.dim(0) == classes,
                 "crossEntropy: weight ", weight.describe(), " must be float32 [", classes,
                 "], one per class of logits ", logProbabilities.describe());
  }
  IMERGE_CHECK(params.labelSmoothing >= 0.0f && params.labelSmoothing <= 1.0f,
               "crossEntropy: label smoothing ", params.labelSmoothing, " is outside [0, 1]");
  const int64_t* label = labels.data<int64_t>();
  for (int64_t n = 0; n < batch; ++n) {
    IMERGE_CHECK(label[n] == params.ignoreIndex || (label[n] >= 0 && label[n] < classes),
                 "crossEntropy: labels[", n, "] = ", label[n], " is out of range for ", classes,
                 " classes: a label must be in [0, ", classes, ") or the ignore index ",
                 params.ignoreIndex);
  }
}

float weightOf(const float* weight, int64_t c) {
  return weight ? weight[c] : 1.0f;
}

// The mean's divisor: the total weight of the samples not ignored.
double totalWeight(const Tensor& labels, const float* weight, int64_t ignoreIndex) {
  const int64_t* label = labels.data<int64_t>();
  double total = 0;
  for (int64_t n = 0; n < labels.dim(0); ++n) {
    if (label[n] != ignoreIndex) total += weightOf(weight, label[n]);
  }
  return total;
}

}  // namespace

Tensor nllLossForward(const Tensor& logProbabilities, const Tensor& labels, const Tensor& weight,
                      const NllLossParams& params) {
  checkInputs(logProbabilities, labels, weight, params);
  const int64_t batch = logProbabilities.dim(0);
  const int64_t classes = logProbabilities.dim(1);
  const float* logp = logProbabilities.data<float>();                  // [N, C]
  const int64_t* label = labels.data<int64_t>();                       // [N]
  const float* w = weight.defined() ? weight.data<float>() : nullptr;  // [C]
  const double smoothing = params.labelSmoothing;
  std::vector<double> losses(static_cast<size_t>(batch), 0.0);  // [N]
  for (int64_t n = 0; n < batch; ++n) {
    if (label[n] == params.ignoreIndex) continue;
    const float* row = logp + n * classes;
    const double nll = -static_cast<double>(weightOf(w, label[n])) * row[label[n]];
    double smooth = 0;  // sum_c w[c] (-logp[n, c])
    if (smoothing > 0) {
      for (int64_t c = 0; c < classes; ++c) smooth -= static_cast<double>(weightOf(w, c)) * row[c];
    }
    losses[n] = (1.0 - smoothing) * nll + smoothing / static_cast<double>(classes) * smooth;
  }
  if (params.reduction == Reduction::None) {
    Tensor loss = Tensor::empty({batch});
    float* out = loss.data<float>();
    for (int64_t n = 0; n < batch; ++n) out[n] = static_cast<float>(losses[n]);
    return loss;
  }
  double total = 0;
  for (double value : losses) total += value;
  if (params.reduction == Reduction::Mean) {
    total /= totalWeight(labels, w, params.ignoreIndex);  // 0 / 0 = NaN when all are ignored
  }
  return Tensor::full({1}, static_cast<float>(total));
}

Tensor nllLossBackward(const Tensor& gradLoss, const Tensor& logProbabilities, const Tensor& labels,
                       const Tensor& weight, const NllLossParams& params) {
  checkInputs(logProbabilities, labels, weight, params);
  const int64_t batch = logProbabilities.dim(0);
  const int64_t classes = logProbabilities.dim(1);
  const Shape lossShape = params.reduction == Reduction::None ? Shape{batch} : Shape{1};
  IMERGE_CHECK(
      gradLoss.defined() && gradLoss.dtype() == DType::Float32 && gradLoss.shape() == lossShape,
      "crossEntropy backward: gradient of the loss ",
      gradLoss.defined() ? gradLoss.describe() : std::string("(undefined)"),
      " does not match the loss float32", shapeToString(lossShape));
  const int64_t* label = labels.data<int64_t>();                       // [N]
  const float* w = weight.defined() ? weight.data<float>() : nullptr;  // [C]
  const float* upstream = gradLoss.data<float>();                      // [N] or [1]
  double shared = upstream[0];  // the factor of every sample for Sum and Mean
  if (params.reduction == Reduction::Mean) shared /= totalWeight(labels, w, params.ignoreIndex);
  const double smoothing = params.labelSmoothing;
  Tensor gradient = Tensor::zeros({batch, classes});
  float* grad = gradient.data<float>();  // [N, C]
  for (int64_t n = 0; n < batch; ++n) {
    if (label[n] == params.ignoreIndex) continue;
    const double factor = params.reduction == Reduction::None ? upstream[n] : shared;
    float* row = grad + n * classes;
    if (smoothing > 0) {
      const double perClass = -factor * smoothing / static_cast<double>(classes);
      for (int64_t c = 0; c < classes; ++c) row[c] = static_cast<float>(perClass * weightOf(w, c));
    }
    row[label[n]] += static_cast<float>(-factor * (1.0 - smoothing) * weightOf(w, label[n]));
  }
  return gradient;
}

}  // namespace imerge::cpu
