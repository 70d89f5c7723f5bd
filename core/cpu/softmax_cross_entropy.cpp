#include "core/cpu/softmax_cross_entropy.h"

#include <cmath>

namespace imerge::cpu {

namespace {
// Shapes and labels are checked up front, serially: an exception cannot leave an OpenMP region.
void checkInputs(const Tensor& logits, const Tensor& labels) {
  IMERGE_CHECK(logits.dtype() == DType::Float32 && logits.ndim() == 2,
               "softmaxCrossEntropy: logits must be float32 [N, C], got ", logits.describe());
  IMERGE_CHECK(labels.dtype() == DType::Int64 && labels.ndim() == 1,
               "softmaxCrossEntropy: labels must be int64 [N], got ", labels.describe());
  const int64_t batch = logits.dim(0);
  const int64_t classes = logits.dim(1);
  IMERGE_CHECK(labels.dim(0) == batch, "softmaxCrossEntropy: logits ", logits.describe(),
               " and labels ", labels.describe(), " disagree on the batch size N");
  IMERGE_CHECK(batch > 0 && classes > 0, "softmaxCrossEntropy: logits ", logits.describe(),
               " are empty; the mean loss of no samples is undefined");
  const int64_t* label = labels.data<int64_t>();
  for (int64_t n = 0; n < batch; ++n) {
    IMERGE_CHECK(label[n] >= 0 && label[n] < classes, "softmaxCrossEntropy: labels[", n,
                 "] = ", label[n], " is out of range [0, ", classes, ") for logits ",
                 logits.describe());
  }
}
}  // namespace

SoftmaxCrossEntropyForward softmaxCrossEntropyForward(const Tensor& logits, const Tensor& labels) {
  checkInputs(logits, labels);
  const int64_t batch = logits.dim(0);
  const int64_t classes = logits.dim(1);
  SoftmaxCrossEntropyForward result;
  result.probabilities = Tensor::empty(logits.shape());
  const float* x = logits.data<float>();                    // [N, C]
  const int64_t* label = labels.data<int64_t>();            // [N]
  float* probability = result.probabilities.data<float>();  // [N, C]

  double total = 0;  // double: the mean of many small per-row losses keeps its digits
#pragma omp parallel for reduction(+ : total) if (batch * classes > 32768) schedule(static)
  for (int64_t n = 0; n < batch; ++n) {
    const float* row = x + n * classes;
    float* out = probability + n * classes;
    float rowMax = row[0];
    for (int64_t c = 1; c < classes; ++c) rowMax = std::fmax(rowMax, row[c]);
    double denominator = 0;
    for (int64_t c = 0; c < classes; ++c) {
      out[c] = std::exp(row[c] - rowMax);
      denominator += out[c];
    }
    const float inverse = static_cast<float>(1.0 / denominator);
    for (int64_t c = 0; c < classes; ++c) out[c] *= inverse;
    // -log softmax[label] = log(sum exp(x - max)) - (x[label] - max): never log of a tiny
    // probability, so a confidently wrong row gives its true large loss rather than inf.
    total += std::log(denominator) - (static_cast<double>(row[label[n]]) - rowMax);
  }
  result.loss = static_cast<float>(total / static_cast<double>(batch));
  return result;
}

Tensor softmaxCrossEntropyBackward(const Tensor& probabilities, const Tensor& labels,
                                   float gradLoss) {
  checkInputs(probabilities, labels);
  const int64_t batch = probabilities.dim(0);
  const int64_t classes = probabilities.dim(1);
  Tensor gradLogits = Tensor::empty(probabilities.shape());
  const float* probability = probabilities.data<float>();     // [N, C]
  const int64_t* label = labels.data<int64_t>();              // [N]
  float* grad = gradLogits.data<float>();                     // [N, C]
  const float factor = gradLoss / static_cast<float>(batch);  // the mean's 1/N
#pragma omp parallel for if (batch * classes > 32768) schedule(static)
  for (int64_t n = 0; n < batch; ++n) {
    const float* in = probability + n * classes;
    float* out = grad + n * classes;
    for (int64_t c = 0; c < classes; ++c) out[c] = in[c] * factor;
    out[label[n]] -= factor;
  }
  return gradLogits;
}

}  // namespace imerge::cpu
