#include "core/cuda/launch.h"
#include "core/cuda/sgd_update.h"

namespace imerge::cuda {

namespace {

// p [n] -= lr * (g [n] + decay * p [n])
__global__ void sgdPlainKernel(float* p, const float* g, int64_t n, float lr, float decay) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    p[i] -= lr * (g[i] + decay * p[i]);
  }
}

// p [n], buf [n] updated together; the same arithmetic, in the same order, as optim/sgd.cpp.
__global__ void sgdMomentumKernel(float* p, float* buf, const float* g, int64_t n, SgdStep step) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    const float d = g[i] + step.weightDecay * p[i];
    buf[i] = step.firstStep ? d : step.momentum * buf[i] + step.keep * d;
    p[i] -= step.learningRate * (step.nesterov ? d + step.momentum * buf[i] : buf[i]);
  }
}

}  // namespace

void sgdUpdate(Tensor& parameter, const Tensor& gradient, Tensor& momentumBuffer,
               const SgdStep& step) {
  IMERGE_CHECK(parameter.dtype() == DType::Float32 && gradient.shape() == parameter.shape() &&
                   gradient.dtype() == DType::Float32,
               "SGD (CUDA): gradient ", gradient.describe(), " does not match parameter ",
               parameter.describe());
  const int64_t n = parameter.numel();
  if (n == 0) return;
  cudaStream_t stream = streamOf(parameter);
  if (step.momentum == 0.0f) {
    sgdPlainKernel<<<blocksFor(n), kThreadsPerBlock, 0, stream>>>(
        parameter.data<float>(), gradient.data<float>(), n, step.learningRate, step.weightDecay);
    checkLaunch("sgdUpdate");
    return;
  }
  IMERGE_CHECK(momentumBuffer.defined() && momentumBuffer.shape() == parameter.shape(),
               "SGD (CUDA): momentum buffer ", momentumBuffer.describe(),
               " does not match parameter ", parameter.describe());
  sgdMomentumKernel<<<blocksFor(n), kThreadsPerBlock, 0, stream>>>(
      parameter.data<float>(), momentumBuffer.data<float>(), gradient.data<float>(), n, step);
  checkLaunch("sgdUpdate");
}

}  // namespace imerge::cuda
