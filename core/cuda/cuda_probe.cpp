// The parts of the CUDA probe that need no CUDA compiler: the error for "no GPU", and the
// answer of a build without CUDA.
#include "core/cuda/cuda_device.h"
#include "core/error.h"

namespace imerge {

#ifndef IMERGE_HAVE_CUDA
int cudaDeviceCount(std::string* whyNone) {
  if (whyNone) *whyNone = "this build of imerge has no CUDA support (nvcc was not found at build time)";
  return 0;
}
#endif

void requireCudaDevice() {
  std::string whyNone;
  IMERGE_CHECK(cudaDeviceCount(&whyNone) > 0, "--device cuda: no usable GPU: ", whyNone,
               ". Use --device cpu, or run on a machine with an NVIDIA GPU and driver");
}

}  // namespace imerge
