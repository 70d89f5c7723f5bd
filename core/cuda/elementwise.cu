// Elementwise and reduction kernels: one grid-stride loop per op over contiguous float32 data.
#include "core/cuda/elementwise.h"
#include "core/cuda/launch.h"

namespace imerge::cuda {

namespace {

void checkFloat(const char* op, const Tensor& t) {
  IMERGE_CHECK(t.dtype() == DType::Float32, op, ": expects float32, got ", t.describe());
}

void checkSameShape(const char* op, const Tensor& a, const Tensor& b) {
  checkFloat(op, a);
  checkFloat(op, b);
  IMERGE_CHECK(a.shape() == b.shape(), op, ": shapes differ: ", a.describe(), " and ",
               b.describe());
}

enum class Binary { Add, Sub, Mul };

// out [n] = a [n] (op) b [n]
__global__ void binaryKernel(float* out, const float* a, const float* b, int64_t n, Binary op) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    const float x = a[i], y = b[i];
    out[i] = op == Binary::Add ? x + y : op == Binary::Sub ? x - y : x * y;
  }
}

// y [n] += alpha * x [n]
__global__ void axpyKernel(float* y, float alpha, const float* x, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    y[i] += alpha * x[i];
  }
}

// out [n] = factor * in [n] (in may be out)
__global__ void scaleKernel(float* out, const float* in, float factor, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    out[i] = factor * in[i];
  }
}

// out [n] = value
__global__ void fillKernel(float* out, float value, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    out[i] = value;
  }
}

// out [n] = max(in, 0)
__global__ void reluForwardKernel(float* out, const float* in, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    out[i] = in[i] > 0.0f ? in[i] : 0.0f;
  }
}

// gradInput [n] = gradOutput [n] where output [n] > 0, else 0
__global__ void reluBackwardKernel(float* gradInput, const float* gradOutput, const float* output,
                                   int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    gradInput[i] = output[i] > 0.0f ? gradOutput[i] : 0.0f;
  }
}

// partial [gridDim.x] = per-block sums of in [n]; a second launch with one block folds them.
// Shared-memory tree reduction; the block size is a power of two (kThreadsPerBlock).
__global__ void sumKernel(float* partial, const float* in, int64_t n) {
  __shared__ float shared[kThreadsPerBlock];
  float total = 0.0f;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    total += in[i];
  }
  shared[threadIdx.x] = total;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) shared[threadIdx.x] += shared[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = shared[0];
}

// sums [cols] = sum over rows of matrix [rows, cols]; one thread per column walks the rows, so
// neighbouring threads read neighbouring addresses (coalesced).
__global__ void sumRowsKernel(float* sums, const float* matrix, int64_t rows, int64_t cols) {
  for (int64_t col = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; col < cols;
       col += int64_t{blockDim.x} * gridDim.x) {
    float total = 0.0f;
    for (int64_t row = 0; row < rows; ++row) total += matrix[row * cols + col];
    sums[col] = total;
  }
}

// matrix [rows, cols] += row [cols]
__global__ void addRowKernel(float* matrix, const float* row, int64_t rows, int64_t cols) {
  const int64_t n = rows * cols;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    matrix[i] += row[i % cols];
  }
}

Tensor binary(const char* op, const Tensor& a, const Tensor& b, Binary which) {
  checkSameShape(op, a, b);
  Tensor out = Tensor::emptyLike(a);
  const int64_t n = a.numel();
  if (n == 0) return out;
  binaryKernel<<<blocksFor(n), kThreadsPerBlock, 0, streamOf(a)>>>(
      out.data<float>(), a.data<float>(), b.data<float>(), n, which);
  checkLaunch(op);
  return out;
}

}  // namespace

void addInPlace(Tensor& destination, const Tensor& source) {
  axpyInPlace(destination, 1.0f, source);
}

void axpyInPlace(Tensor& destination, float alpha, const Tensor& source) {
  checkSameShape("axpyInPlace", destination, source);
  const int64_t n = destination.numel();
  if (n == 0) return;
  axpyKernel<<<blocksFor(n), kThreadsPerBlock, 0, streamOf(destination)>>>(
      destination.data<float>(), alpha, source.data<float>(), n);
  checkLaunch("axpyInPlace");
}

void scaleInPlace(Tensor& destination, float factor) {
  checkFloat("scaleInPlace", destination);
  const int64_t n = destination.numel();
  if (n == 0) return;
  float* data = destination.data<float>();
  scaleKernel<<<blocksFor(n), kThreadsPerBlock, 0, streamOf(destination)>>>(data, data, factor, n);
  checkLaunch("scaleInPlace");
}

void fill(Tensor& destination, float value) {
  checkFloat("fill", destination);
  const int64_t n = destination.numel();
  if (n == 0) return;
  fillKernel<<<blocksFor(n), kThreadsPerBlock, 0, streamOf(destination)>>>(
      destination.data<float>(), value, n);
  checkLaunch("fill");
}

Tensor add(const Tensor& a, const Tensor& b) {
  return binary("add", a, b, Binary::Add);
}
Tensor sub(const Tensor& a, const Tensor& b) {
  return binary("sub", a, b, Binary::Sub);
}
Tensor mul(const Tensor& a, const Tensor& b) {
  return binary("mul", a, b, Binary::Mul);
}

Tensor scale(const Tensor& a, float factor) {
  checkFloat("scale", a);
  Tensor out = Tensor::emptyLike(a);
  const int64_t n = a.numel();
  if (n == 0) return out;
  scaleKernel<<<blocksFor(n), kThreadsPerBlock, 0, streamOf(a)>>>(out.data<float>(),
                                                                  a.data<float>(), factor, n);
  checkLaunch("scale");
  return out;
}

Tensor reluForward(const Tensor& input) {
  checkFloat("relu", input);
  Tensor out = Tensor::emptyLike(input);
  const int64_t n = input.numel();
  if (n == 0) return out;
  reluForwardKernel<<<blocksFor(n), kThreadsPerBlock, 0, streamOf(input)>>>(out.data<float>(),
                                                                            input.data<float>(), n);
  checkLaunch("relu");
  return out;
}

Tensor reluBackward(const Tensor& gradOutput, const Tensor& output) {
  checkSameShape("reluBackward", gradOutput, output);
  Tensor gradInput = Tensor::emptyLike(output);
  const int64_t n = output.numel();
  if (n == 0) return gradInput;
  reluBackwardKernel<<<blocksFor(n), kThreadsPerBlock, 0, streamOf(output)>>>(
      gradInput.data<float>(), gradOutput.data<float>(), output.data<float>(), n);
  checkLaunch("reluBackward");
  return gradInput;
}

float sumAll(const Tensor& input) {
  checkFloat("sumAll", input);
  const int64_t n = input.numel();
  if (n == 0) return 0.0f;
  // Two passes: per-block sums, then one block over them (blocksFor caps them at 65535, which
  // one block's grid-stride loop folds).
  const unsigned blocks = std::min<unsigned>(blocksFor(n), 1024);
  Tensor partial = Tensor::empty({static_cast<int64_t>(blocks)}, DType::Float32, input.device());
  Tensor total = Tensor::empty({1}, DType::Float32, input.device());
  cudaStream_t stream = streamOf(input);
  sumKernel<<<blocks, kThreadsPerBlock, 0, stream>>>(partial.data<float>(), input.data<float>(), n);
  checkLaunch("sumAll");
  sumKernel<<<1, kThreadsPerBlock, 0, stream>>>(total.data<float>(), partial.data<float>(), blocks);
  checkLaunch("sumAll");
  return total.item();
}

Tensor sumRows(const Tensor& matrix) {
  checkFloat("sumRows", matrix);
  IMERGE_CHECK(matrix.ndim() == 2, "sumRows: ", matrix.describe(), " must be 2-D [rows, cols]");
  const int64_t rows = matrix.dim(0), cols = matrix.dim(1);
  Tensor sums = Tensor::zeros({cols}, DType::Float32, matrix.device());
  if (rows == 0 || cols == 0) return sums;
  sumRowsKernel<<<blocksFor(cols), kThreadsPerBlock, 0, streamOf(matrix)>>>(
      sums.data<float>(), matrix.data<float>(), rows, cols);
  checkLaunch("sumRows");
  return sums;
}

void addRowInPlace(Tensor& matrix, const Tensor& row) {
  checkFloat("addRowInPlace", matrix);
  checkFloat("addRowInPlace", row);
  IMERGE_CHECK(matrix.ndim() == 2 && row.ndim() == 1 && row.dim(0) == matrix.dim(1),
               "addRowInPlace: row ", row.describe(), " does not match the columns of ",
               matrix.describe());
  const int64_t n = matrix.numel();
  if (n == 0) return;
  addRowKernel<<<blocksFor(n), kThreadsPerBlock, 0, streamOf(matrix)>>>(
      matrix.data<float>(), row.data<float>(), matrix.dim(0), matrix.dim(1));
  checkLaunch("addRowInPlace");
}

}  // namespace imerge::cuda
