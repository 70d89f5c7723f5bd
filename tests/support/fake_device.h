// Devices for testing device-dependent paths on a machine without a GPU:
//  - HostBackedDevice: host memory behind any DeviceType, named as asked ("fake-cuda:0"), so
//    the ops' dispatch sees a "CUDA" tensor without any CUDA call. Kernels must never run on
//    it (they would treat host pointers as device pointers): its backend is a RefusingBackend,
//    so tests use it for the checks that come before a kernel (mixed devices, which device's
//    kernels an op asks for, "not implemented on CUDA yet").
//  - its allocator takes a capacity and a backing allocator that can be made to fail, to
//    reach the out-of-memory path.
#pragma once

#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <string>

#include "core/caching_allocator.h"
#include "core/device.h"
#include "support/refusing_backend.h"

namespace imerge::testing {

class HostBackedDevice final : public Device {
 public:
  HostBackedDevice(
      DeviceType type, std::string name, size_t capacityBytes = std::numeric_limits<size_t>::max(),
      std::function<void*(size_t)> backing = [](size_t bytes) { return std::malloc(bytes); })
      : type_(type),
        name_(std::move(name)),
        backend_(name_),
        allocator_(
            std::move(backing), [](void* ptr) { std::free(ptr); }, capacityBytes) {}

  DeviceType type() const override { return type_; }
  std::string name() const override { return name_; }
  void* allocate(size_t bytes) override { return allocator_.allocate(bytes); }
  void deallocate(void* ptr) override { allocator_.deallocate(ptr); }
  AllocatorStats memoryStats() const override { return allocator_.stats(); }
  void copyBytes(void* dst, const void* src, size_t bytes) override {
    std::memcpy(dst, src, bytes);
  }
  void copyBytesFromHost(void* dst, const void* src, size_t bytes) override {
    std::memcpy(dst, src, bytes);
  }
  void copyBytesToHost(void* dst, const void* src, size_t bytes) override {
    std::memcpy(dst, src, bytes);
  }
  void setBytesToZero(void* dst, size_t bytes) override { std::memset(dst, 0, bytes); }
  const Backend& backend() const override { return backend_; }

 private:
  DeviceType type_;
  std::string name_;
  RefusingBackend backend_;
  CachingAllocator allocator_;
};

}  // namespace imerge::testing
