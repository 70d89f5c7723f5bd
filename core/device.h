// Devices own memory and the context kernels run in (SINGA's Device/Context pattern), and name
// the kernels that run on their memory (backend(), which core/backend.h's backendFor asks). The
// CPU device is always there; a CUDA device exists only in a build with CUDA, when a GPU is
// present (core/cuda/; core/cuda_availability.h says whether). Kernels find their handles through
// the device a tensor lives on.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "core/caching_allocator.h"

namespace imerge {

class Backend;

enum class DeviceType { CPU, CUDA };

class Device {
 public:
  virtual ~Device() = default;
  virtual DeviceType type() const = 0;
  virtual std::string name() const = 0;  // "cpu", "cuda:0"
  virtual void* allocate(size_t bytes) = 0;
  virtual void deallocate(void* ptr) = 0;
  virtual AllocatorStats memoryStats() const = 0;
  // Copies between two buffers of this device.
  virtual void copyBytes(void* dst, const void* src, size_t bytes) = 0;
  // Copies between host memory and this device; they return when the host buffer may be
  // reused (after copyBytesToHost, when its data has arrived).
  virtual void copyBytesFromHost(void* dst, const void* hostSrc, size_t bytes) = 0;
  virtual void copyBytesToHost(void* hostDst, const void* src, size_t bytes) = 0;
  virtual void setBytesToZero(void* dst, size_t bytes) = 0;
  // Returns once the work queued on the device so far has run; the CPU runs it as it is called.
  virtual void synchronize() const {}
  // The kernels that run on this device's memory (process-wide, never destroyed).
  virtual const Backend& backend() const = 0;
};

class CpuDevice final : public Device {
 public:
  CpuDevice();
  DeviceType type() const override { return DeviceType::CPU; }
  std::string name() const override { return "cpu"; }
  void* allocate(size_t bytes) override { return allocator_.allocate(bytes); }
  void deallocate(void* ptr) override { allocator_.deallocate(ptr); }
  AllocatorStats memoryStats() const override { return allocator_.stats(); }
  void copyBytes(void* dst, const void* src, size_t bytes) override;
  void copyBytesFromHost(void* dst, const void* hostSrc, size_t bytes) override {
    copyBytes(dst, hostSrc, bytes);
  }
  void copyBytesToHost(void* hostDst, const void* src, size_t bytes) override {
    copyBytes(hostDst, src, bytes);
  }
  void setBytesToZero(void* dst, size_t bytes) override;
  const Backend& backend() const override;

  // Host memory is 64-byte aligned: one cache line, one AVX-512 vector.
  static constexpr size_t kAlignment = 64;

 private:
  CachingAllocator allocator_;
};

// The process-wide CPU device.
Device& cpuDevice();

// Threads used by the CPU kernels (OpenMP, oneDNN and OpenBLAS alike).
void setNumThreads(int threads);
int numThreads();

}  // namespace imerge
