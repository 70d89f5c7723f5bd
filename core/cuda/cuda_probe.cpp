// The parts of the CUDA device that need no CUDA compiler: the error for "no GPU", finding a
// tensor's CudaDevice, and the answers of a build without CUDA.
#include "core/cuda/cuda_device.h"
#include "core/error.h"
#include "core/tensor.h"

namespace imerge {

#ifndef IMERGE_HAVE_CUDA
int cudaDeviceCount(std::string* whyNone) {
  if (whyNone)
    *whyNone = "this build of imerge has no CUDA support (nvcc was not found at build time)";
  return 0;
}

// Never constructed in such a build (cudaDevice() throws first); defined so that the class
// links wherever it is named.
CudaDevice::CudaDevice(int index) : index_(index), allocator_(nullptr, nullptr) {
  requireCudaDevice();
}
CudaDevice::~CudaDevice() = default;
void CudaDevice::copyBytes(void*, const void*, size_t) {
  requireCudaDevice();
}
void CudaDevice::copyBytesFromHost(void*, const void*, size_t) {
  requireCudaDevice();
}
void CudaDevice::copyBytesToHost(void*, const void*, size_t) {
  requireCudaDevice();
}
void CudaDevice::setBytesToZero(void*, size_t) {
  requireCudaDevice();
}
void CudaDevice::makeCurrent() const {
  requireCudaDevice();
}
void CudaDevice::synchronize() const {
  requireCudaDevice();
}

CudaDevice& cudaDevice(int) {
  requireCudaDevice();
  IMERGE_FAIL("unreachable: requireCudaDevice() returned in a build without CUDA");
}
#endif

void requireCudaDevice() {
  std::string whyNone;
  IMERGE_CHECK(cudaDeviceCount(&whyNone) > 0, "--device cuda: no usable GPU: ", whyNone,
               ". Use --device cpu, or run on a machine with an NVIDIA GPU and driver");
}

CudaDevice& cudaDeviceOf(const Tensor& tensor) {
  auto* device = dynamic_cast<CudaDevice*>(&tensor.device());
  IMERGE_CHECK(device != nullptr, "CUDA kernel: ", tensor.describe(), " lives on ",
               tensor.device().name(), ", which is not a CudaDevice");
  return *device;
}

}  // namespace imerge
