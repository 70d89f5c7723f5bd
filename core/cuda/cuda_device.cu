#include <cuda_runtime.h>

#include "core/cuda/cuda_device.h"

namespace imerge {

int cudaDeviceCount(std::string* whyNone) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    // Without a GPU this reports "CUDA driver version is insufficient" or "no CUDA-capable
    // device": both mean there is nothing to run on.
    if (whyNone) *whyNone = std::string("CUDA runtime: ") + cudaGetErrorString(status);
    cudaGetLastError();  // clear the sticky error so later probes start clean
    return 0;
  }
  if (count == 0 && whyNone) *whyNone = "no CUDA-capable GPU is present";
  return count;
}

}  // namespace imerge
