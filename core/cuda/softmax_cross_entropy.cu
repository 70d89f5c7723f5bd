// Softmax cross-entropy: one block per row of logits, a shared-memory reduction for the row's
// maximum and for its sum of exponentials, then the row's loss term. The mean over rows is one
// more small reduction on the device, and only that float goes back to the host.
#include <vector>

#include "core/cuda/elementwise.h"
#include "core/cuda/launch.h"
#include "core/cuda/softmax_cross_entropy.h"

namespace imerge::cuda {

namespace {

// A block-wide reduction over shared[blockDim.x] (a power of two): max or sum into shared[0].
template <bool Max>
__device__ void reduceBlock(float* shared) {
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) {
      const float other = shared[threadIdx.x + stride];
      shared[threadIdx.x] = Max ? fmaxf(shared[threadIdx.x], other) : shared[threadIdx.x] + other;
    }
    __syncthreads();
  }
}

// logits [N, C], labels [N] -> probabilities [N, C], rowLoss [N] = -log p[n, label[n]].
// The row's maximum is subtracted before exponentiating (no overflow for large logits), and
// the loss is taken as log(sum) - (logit - max), which keeps tiny probabilities exact.
__global__ void softmaxCrossEntropyForwardKernel(float* probabilities, float* rowLoss,
                                                 const float* logits, const int64_t* labels,
                                                 int64_t classes) {
  __shared__ float shared[kThreadsPerBlock];
  const int64_t row = blockIdx.x;
  const float* x = logits + row * classes;
  float* p = probabilities + row * classes;

  float rowMax = -INFINITY;
  for (int64_t c = threadIdx.x; c < classes; c += blockDim.x) rowMax = fmaxf(rowMax, x[c]);
  shared[threadIdx.x] = rowMax;
  __syncthreads();
  reduceBlock<true>(shared);
  rowMax = shared[0];
  __syncthreads();

  float sum = 0.0f;
  for (int64_t c = threadIdx.x; c < classes; c += blockDim.x) {
    const float e = expf(x[c] - rowMax);
    p[c] = e;
    sum += e;
  }
  shared[threadIdx.x] = sum;
  __syncthreads();
  reduceBlock<false>(shared);
  sum = shared[0];

  for (int64_t c = threadIdx.x; c < classes; c += blockDim.x) p[c] /= sum;
  if (threadIdx.x == 0) rowLoss[row] = logf(sum) - (x[labels[row]] - rowMax);
}

// gradLogits [N, C] = (probabilities - onehot(labels)) * factor, factor = gradLoss / N
__global__ void softmaxCrossEntropyBackwardKernel(float* gradLogits, const float* probabilities,
                                                  const int64_t* labels, int64_t rows,
                                                  int64_t classes, float factor) {
  const int64_t n = rows * classes;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    const int64_t row = i / classes, c = i % classes;
    gradLogits[i] = (probabilities[i] - (labels[row] == c ? 1.0f : 0.0f)) * factor;
  }
}

void checkOperands(const Tensor& logits, const Tensor& labels) {
  IMERGE_CHECK(logits.dtype() == DType::Float32 && logits.ndim() == 2,
               "softmaxCrossEntropy: logits ", logits.describe(), " must be float32 [N, C]");
  IMERGE_CHECK(
      labels.dtype() == DType::Int64 && labels.ndim() == 1 && labels.dim(0) == logits.dim(0),
      "softmaxCrossEntropy: labels ", labels.describe(), " must be int64 [", logits.dim(0),
      "] to match logits ", logits.describe());
}

}  // namespace

cpu::SoftmaxCrossEntropyForward softmaxCrossEntropyForward(const Tensor& logits,
                                                           const Tensor& labels) {
  checkOperands(logits, labels);
  const int64_t rows = logits.dim(0), classes = logits.dim(1);
  IMERGE_CHECK(rows > 0 && classes > 0, "softmaxCrossEntropy: logits ", logits.describe(),
               " are empty; the mean loss is undefined");
  // A label out of range would index outside its row on the device: check on the host.
  const Tensor hostLabels = labels.to(cpuDevice());
  const int64_t* label = hostLabels.data<int64_t>();
  for (int64_t row = 0; row < rows; ++row) {
    IMERGE_CHECK(label[row] >= 0 && label[row] < classes, "softmaxCrossEntropy: label ", row,
                 " is ", label[row], ", outside [0, ", classes, ") for logits ", logits.describe());
  }
  cpu::SoftmaxCrossEntropyForward result;
  result.probabilities = Tensor::emptyLike(logits);
  Tensor rowLoss = Tensor::empty({rows}, DType::Float32, logits.device());
  softmaxCrossEntropyForwardKernel<<<static_cast<unsigned>(rows), kThreadsPerBlock, 0,
                                     streamOf(logits)>>>(
      result.probabilities.data<float>(), rowLoss.data<float>(), logits.data<float>(),
      labels.data<int64_t>(), classes);
  checkLaunch("softmaxCrossEntropy");
  result.loss = sumAll(rowLoss) / static_cast<float>(rows);
  return result;
}

Tensor softmaxCrossEntropyBackward(const Tensor& probabilities, const Tensor& labels,
                                   float gradLoss) {
  checkOperands(probabilities, labels);
  const int64_t rows = probabilities.dim(0), classes = probabilities.dim(1);
  Tensor gradLogits = Tensor::emptyLike(probabilities);
  const int64_t n = rows * classes;
  if (n == 0) return gradLogits;
  softmaxCrossEntropyBackwardKernel<<<blocksFor(n), kThreadsPerBlock, 0, streamOf(probabilities)>>>(
      gradLogits.data<float>(), probabilities.data<float>(), labels.data<int64_t>(), rows, classes,
      gradLoss / static_cast<float>(rows));
  checkLaunch("softmaxCrossEntropyBackward");
  return gradLogits;
}

}  // namespace imerge::cuda
