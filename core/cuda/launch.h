// What every kernel file of core/cuda needs to launch on a tensor's device: its CudaDevice made
// current, its stream, and a grid that covers n elements. For .cu files.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "core/cuda/cuda_check.h"
#include "core/cuda/cuda_device.h"
#include "core/tensor.h"

namespace imerge::cuda {

constexpr int kThreadsPerBlock = 256;

// Blocks for a grid-stride loop over n elements: enough to fill the GPU, capped so huge
// tensors loop inside the kernel instead of launching millions of blocks.
inline unsigned blocksFor(int64_t n) {
  const int64_t blocks = (n + kThreadsPerBlock - 1) / kThreadsPerBlock;
  return static_cast<unsigned>(std::clamp<int64_t>(blocks, 1, 65535));
}

// The stream of the tensor's device, after making that device current.
inline cudaStream_t streamOf(const Tensor& tensor) {
  CudaDevice& device = cudaDeviceOf(tensor);
  device.makeCurrent();
  return device.stream();
}

}  // namespace imerge::cuda
