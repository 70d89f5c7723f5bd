// The CUDA device: the probe that says whether a usable GPU is present (and why not), and
// CudaDevice, the Device of one GPU with its context (SINGA's Device/Context pattern):
//  - one non-blocking compute stream: every kernel, cuBLAS and cuDNN call and every copy of
//    this device runs on it, in order, so the host never waits except to read results;
//  - cuBLAS and cuDNN handles bound to that stream;
//  - a caching allocator over cudaMalloc/cudaFree. Freed blocks are reused at once: that is
//    safe because the work that last used a block was queued on the same stream before any
//    later user's work (PyTorch's rule for one stream).
//
// This header needs no CUDA headers (the handle types are declared opaquely), so it is
// included by code built without nvcc and in builds without CUDA.
#pragma once

#include <string>

#include "core/caching_allocator.h"
#include "core/device.h"

// The CUDA libraries' handle types, declared as they define them.
struct CUstream_st;
struct cublasContext;
struct cudnnContext;

namespace imerge {

// Number of usable GPUs; 0 with `whyNone` filled in when there are none (or the build has no
// CUDA). A missing or too-old driver counts as "no GPU", not as a crash.
int cudaDeviceCount(std::string* whyNone = nullptr);

// Throws imerge::Error with the reason when no GPU can be used.
void requireCudaDevice();

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

  int index() const { return index_; }
  CUstream_st* stream() const { return stream_; }
  cublasContext* cublas() const { return cublas_; }
  cudnnContext* cudnn() const { return cudnn_; }
  // Makes this GPU current for the calling thread (kernels launch on the current GPU).
  void makeCurrent() const;
  // Waits until everything queued on the stream has run; reports a failed kernel.
  void synchronize() const;
  // Returns cached blocks to cudaFree (for other processes, or before a big allocation).
  void releaseCachedMemory() { allocator_.releaseCached(); }

 private:
  int index_;
  CUstream_st* stream_ = nullptr;
  cublasContext* cublas_ = nullptr;
  cudnnContext* cudnn_ = nullptr;
  CachingAllocator allocator_;
};

// The process-wide device of GPU `index`, created on first use and never destroyed (tensors in
// static objects may outlive any order we pick). Throws requireCudaDevice()'s clear reason when
// there is no GPU, and names the count when `index` is out of range.
CudaDevice& cudaDevice(int index = 0);

// The CudaDevice a CUDA tensor lives on (for kernels).
CudaDevice& cudaDeviceOf(const class Tensor& tensor);

}  // namespace imerge
