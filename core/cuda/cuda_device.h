// CudaDevice, the Device of one GPU with its context (SINGA's Device/Context pattern):
//  - one non-blocking compute stream: every kernel, cuBLAS and cuDNN call and every copy of
//    this device runs on it, in order, so the host never waits except to read results;
//  - cuBLAS and cuDNN handles bound to that stream;
//  - a caching allocator over cudaMalloc/cudaFree. Freed blocks are reused at once: that is
//    safe because the work that last used a block was queued on the same stream before any
//    later user's work (PyTorch's rule for one stream).
//
// Its kernels are core/cuda/cuda_backend.cpp's. This header needs no CUDA headers (the handle
// types are declared opaquely), so code built by g++ includes it; its definitions exist only in
// builds with CUDA. cudaDevice() and cudaDeviceCount(), which exist in every build, are in
// core/cuda_availability.h (included here for the code that uses the device).
#pragma once

#include <string>

#include "core/caching_allocator.h"
#include "core/cuda_availability.h"
#include "core/device.h"

// The CUDA libraries' handle types, declared as they define them.
struct CUstream_st;
struct cublasContext;
struct cudnnContext;

namespace imerge {

class CudaDevice final : public Device {
 public:
  // Selects GPU `index`, creates its stream and handles. Throws when it cannot.
  explicit CudaDevice(int index);
  ~CudaDevice() override;
  CudaDevice(const CudaDevice&) = delete;
  CudaDevice& operator=(const CudaDevice&) = delete;

  DeviceType type() const override { return DeviceType::CUDA; }
  std::string name() const override { return "cuda:" + std::to_string(index_); }
  void* allocate(size_t bytes) override { return allocator_.allocate(bytes); }
  void deallocate(void* ptr) override { allocator_.deallocate(ptr); }
  AllocatorStats memoryStats() const override { return allocator_.stats(); }
  void copyBytes(void* dst, const void* src, size_t bytes) override;
  void copyBytesFromHost(void* dst, const void* hostSrc, size_t bytes) override;
  void copyBytesToHost(void* hostDst, const void* src, size_t bytes) override;
  void setBytesToZero(void* dst, size_t bytes) override;
  const Backend& backend() const override;

  int index() const { return index_; }
  CUstream_st* stream() const { return stream_; }
  cublasContext* cublas() const { return cublas_; }
  cudnnContext* cudnn() const { return cudnn_; }
  // Makes this GPU current for the calling thread (kernels launch on the current GPU).
  void makeCurrent() const;
  // Waits until everything queued on the stream has run; reports a failed kernel.
  void synchronize() const override;
  // Returns cached blocks to cudaFree (for other processes, or before a big allocation).
  void releaseCachedMemory() { allocator_.releaseCached(); }

 private:
  int index_;
  CUstream_st* stream_ = nullptr;
  cublasContext* cublas_ = nullptr;
  cudnnContext* cudnn_ = nullptr;
  CachingAllocator allocator_;
};

// The CudaDevice a CUDA tensor lives on (for kernels).
CudaDevice& cudaDeviceOf(const class Tensor& tensor);

namespace cuda {
// What core/cuda_availability.cpp answers in a build with CUDA; call cudaDeviceCount() and
// cudaDevice() instead. probeDeviceCount asks the CUDA runtime; deviceAt checks the index.
int probeDeviceCount(std::string* whyNone);
CudaDevice& deviceAt(int index);
}  // namespace cuda

}  // namespace imerge
