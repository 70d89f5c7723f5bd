// The only source of core/ outside core/cuda/ that asks whether the build has CUDA: the rest of
// core is the same in every build, and its CUDA-only code is chosen by folder (CMakeLists.txt).
#include "core/cuda_availability.h"

#include "core/error.h"

#if IMERGE_HAVE_CUDA
#include "core/cuda/cuda_device.h"
#endif

namespace imerge {

int cudaDeviceCount(std::string* whyNone) {
#if IMERGE_HAVE_CUDA
  return cuda::probeDeviceCount(whyNone);
#else
  if (whyNone) {
    *whyNone = "this build of imerge has no CUDA support (nvcc was not found at build time)";
  }
  return 0;
#endif
}

void requireCudaDevice() {
  std::string whyNone;
  IMERGE_CHECK(cudaDeviceCount(&whyNone) > 0, "--device cuda: no usable GPU: ", whyNone,
               ". Use --device cpu, or run on a machine with an NVIDIA GPU and driver");
}

CudaDevice& cudaDevice(int index) {
  requireCudaDevice();
#if IMERGE_HAVE_CUDA
  return cuda::deviceAt(index);
#else
  IMERGE_FAIL("unreachable: requireCudaDevice() returned in a build without CUDA");
#endif
}

}  // namespace imerge
