// RAII owners of cuDNN's descriptors (tensor, filter, convolution, LRN): each creates its handle in
// the constructor and destroys it in the destructor, so an exception between creating and
// using a descriptor leaks nothing. Movable, not copyable (a descriptor has one owner). The
// set*() helpers describe imerge's only layout, dense NCHW float32, and refuse sizes the legacy
// cuDNN API cannot hold (it takes int dimensions and at most 2^31 - 1 elements per tensor)
// with an error naming the op and the shape. For .cu files (needs the cuDNN headers).
#pragma once

#include <cudnn.h>

#include <cstdint>
#include <limits>
#include <utility>

#include "core/cuda/cuda_check.h"
#include "core/shape.h"

namespace imerge::cuda {

template <typename Handle, cudnnStatus_t (*Create)(Handle*), cudnnStatus_t (*Destroy)(Handle)>
class CudnnDescriptor {
 public:
  CudnnDescriptor() { check(Create(&handle_), "cudnnCreate*Descriptor"); }
  ~CudnnDescriptor() {
    if (handle_) Destroy(handle_);  // cannot fail for a valid handle; nothing to report to
  }
  CudnnDescriptor(const CudnnDescriptor&) = delete;
  CudnnDescriptor& operator=(const CudnnDescriptor&) = delete;
  CudnnDescriptor(CudnnDescriptor&& other) noexcept : handle_(std::exchange(other.handle_, {})) {}
  CudnnDescriptor& operator=(CudnnDescriptor&& other) noexcept {
    std::swap(handle_, other.handle_);
    return *this;
  }

  Handle get() const { return handle_; }

 private:
  Handle handle_{};
};

using TensorDescriptor = CudnnDescriptor<cudnnTensorDescriptor_t, cudnnCreateTensorDescriptor,
                                         cudnnDestroyTensorDescriptor>;
using FilterDescriptor = CudnnDescriptor<cudnnFilterDescriptor_t, cudnnCreateFilterDescriptor,
                                         cudnnDestroyFilterDescriptor>;
using ConvolutionDescriptor =
    CudnnDescriptor<cudnnConvolutionDescriptor_t, cudnnCreateConvolutionDescriptor,
                    cudnnDestroyConvolutionDescriptor>;
using LrnDescriptor =
    CudnnDescriptor<cudnnLRNDescriptor_t, cudnnCreateLRNDescriptor, cudnnDestroyLRNDescriptor>;

// The int the legacy API wants for a size, or an error naming `op`, `what` and its shape.
inline int cudnnSize(int64_t size, const char* op, const char* what, const Shape& shape) {
  IMERGE_CHECK(
      size >= 0 && size <= std::numeric_limits<int>::max(), op, ": ", what, " ",
      shapeToString(shape),
      " is too large for cuDNN's legacy API (sizes and element counts must stay below 2^31)");
  return static_cast<int>(size);
}

// The four sizes of a 4-D shape as the legacy API's ints, or an error naming `op` and `what`.
struct CudnnDims4 {
  int d0, d1, d2, d3;
};
inline CudnnDims4 cudnnDims4(const Shape& shape, const char* op, const char* what) {
  IMERGE_CHECK(shape.size() == 4, op, ": ", what, " ", shapeToString(shape), " is not 4-D");
  // The legacy API computes offsets in int: the whole tensor must stay below 2^31 elements.
  cudnnSize(shapeNumel(shape), op, what, shape);
  return {cudnnSize(shape[0], op, what, shape), cudnnSize(shape[1], op, what, shape),
          cudnnSize(shape[2], op, what, shape), cudnnSize(shape[3], op, what, shape)};
}

// A dense NCHW float32 tensor [n, c, h, w]; `shape` must have 4 dimensions.
inline TensorDescriptor nchwTensorDescriptor(const Shape& shape, const char* op, const char* what) {
  const CudnnDims4 dims = cudnnDims4(shape, op, what);
  TensorDescriptor descriptor;
  IMERGE_CUDA_CHECK(cudnnSetTensor4dDescriptor(
      descriptor.get(), CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, dims.d0, dims.d1, dims.d2, dims.d3));
  return descriptor;
}

// A per-channel tensor [1, channels, 1, 1]: a bias broadcast over N, H and W, or batch norm's
// scale, bias, mean and variance.
inline TensorDescriptor channelTensorDescriptor(int64_t channels, const char* op,
                                                const char* what) {
  return nchwTensorDescriptor({1, channels, 1, 1}, op, what);
}

// An OIHW float32 filter [C_out, C_in / groups, kH, kW] (cuDNN's layout for grouped filters).
inline FilterDescriptor oihwFilterDescriptor(const Shape& shape, const char* op, const char* what) {
  const CudnnDims4 dims = cudnnDims4(shape, op, what);
  FilterDescriptor descriptor;
  IMERGE_CUDA_CHECK(cudnnSetFilter4dDescriptor(
      descriptor.get(), CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, dims.d0, dims.d1, dims.d2, dims.d3));
  return descriptor;
}

}  // namespace imerge::cuda
