// The CUDA kernels behind the Backend interface (core/backend.h): what CudaDevice::backend()
// returns. Each member forwards to the kernel in core/cuda/ that implements it; like everything
// in core/cuda/, it exists only in a build with CUDA.
#pragma once

#include "core/backend.h"

namespace imerge {

// The process-wide CUDA backend, one for every GPU: each kernel runs on its operands' device.
const Backend& cudaBackend();

}  // namespace imerge
