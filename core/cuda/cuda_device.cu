#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <memory>
#include <mutex>
#include <vector>

#include "core/cuda/cuda_backend.h"
#include "core/cuda/cuda_check.h"
#include "core/cuda/cuda_device.h"
#include "core/tensor.h"

namespace imerge {

int cuda::probeDeviceCount(std::string* whyNone) {
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

namespace {
// The caching allocator's backing allocator: nullptr on failure, so that the allocator can
// release its cache, retry, and then throw OutOfMemoryError with the tensor's shape.
void* cudaMallocOrNull(int index, size_t bytes) {
  cudaSetDevice(index);
  void* block = nullptr;
  if (cudaMalloc(&block, bytes) != cudaSuccess) {
    cudaGetLastError();  // an out-of-memory is not sticky; clear it for the next call
    return nullptr;
  }
  return block;
}
}  // namespace

CudaDevice::CudaDevice(int index)
    : index_(index),
      allocator_([index](size_t bytes) { return cudaMallocOrNull(index, bytes); },
                 [index](void* block) {
                   cudaSetDevice(index);
                   cudaFree(block);
                 }) {
  IMERGE_CUDA_CHECK(cudaSetDevice(index));
  // Non-blocking: the legacy default stream must not serialise us with other libraries' work.
  IMERGE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  IMERGE_CUDA_CHECK(cublasCreate(&cublas_));
  IMERGE_CUDA_CHECK(cublasSetStream(cublas_, stream_));
  IMERGE_CUDA_CHECK(cudnnCreate(&cudnn_));
  IMERGE_CUDA_CHECK(cudnnSetStream(cudnn_, stream_));
}

CudaDevice::~CudaDevice() {
  // Errors cannot be thrown from here; the process is usually ending anyway.
  cudaSetDevice(index_);
  cudaStreamSynchronize(stream_);
  allocator_.releaseCached();
  if (cudnn_) cudnnDestroy(cudnn_);
  if (cublas_) cublasDestroy(cublas_);
  if (stream_) cudaStreamDestroy(stream_);
}

void CudaDevice::makeCurrent() const {
  IMERGE_CUDA_CHECK(cudaSetDevice(index_));
}

void CudaDevice::synchronize() const {
  IMERGE_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void CudaDevice::copyBytes(void* dst, const void* src, size_t bytes) {
  if (!bytes) return;
  IMERGE_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream_));
}

void CudaDevice::copyBytesFromHost(void* dst, const void* hostSrc, size_t bytes) {
  if (!bytes) return;
  IMERGE_CUDA_CHECK(cudaMemcpyAsync(dst, hostSrc, bytes, cudaMemcpyHostToDevice, stream_));
  // The host buffer is pageable and may be freed as soon as we return.
  synchronize();
}

void CudaDevice::copyBytesToHost(void* hostDst, const void* src, size_t bytes) {
  if (!bytes) return;
  IMERGE_CUDA_CHECK(cudaMemcpyAsync(hostDst, src, bytes, cudaMemcpyDeviceToHost, stream_));
  synchronize();  // the host is about to read it
}

void CudaDevice::setBytesToZero(void* dst, size_t bytes) {
  if (!bytes) return;
  IMERGE_CUDA_CHECK(cudaMemsetAsync(dst, 0, bytes, stream_));
}

const Backend& CudaDevice::backend() const {
  return cudaBackend();
}

CudaDevice& cudaDeviceOf(const Tensor& tensor) {
  auto* device = dynamic_cast<CudaDevice*>(&tensor.device());
  IMERGE_CHECK(device != nullptr, "CUDA kernel: ", tensor.describe(), " lives on ",
               tensor.device().name(), ", which is not a CudaDevice");
  return *device;
}

// cudaDevice() has checked that a GPU is usable.
CudaDevice& cuda::deviceAt(int index) {
  const int count = probeDeviceCount(nullptr);
  IMERGE_CHECK(index >= 0 && index < count, "cudaDevice: GPU ", index,
               " does not exist; this machine has ", count, " (0..", count - 1, ")");
  static std::mutex mutex;
  static auto* devices = new std::vector<std::unique_ptr<CudaDevice>>();  // never destroyed
  std::lock_guard<std::mutex> lock(mutex);
  if (devices->size() < static_cast<size_t>(count)) devices->resize(count);
  auto& device = (*devices)[index];
  if (!device) device = std::make_unique<CudaDevice>(index);
  return *device;
}

}  // namespace imerge
