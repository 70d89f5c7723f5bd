#include "core/device.h"

#include <cstdlib>
#include <cstring>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "core/cpu/cpu_backend.h"

namespace imerge {

CpuDevice::CpuDevice()
    : allocator_([](size_t bytes) { return std::aligned_alloc(kAlignment, bytes); },
                 [](void* ptr) { std::free(ptr); }) {}

void CpuDevice::copyBytes(void* dst, const void* src, size_t bytes) {
  if (bytes) std::memcpy(dst, src, bytes);
}

void CpuDevice::setBytesToZero(void* dst, size_t bytes) {
  if (bytes) std::memset(dst, 0, bytes);
}

const Backend& CpuDevice::backend() const {
  return cpuBackend();
}

Device& cpuDevice() {
  // Never destroyed: tensors in static objects may outlive any destruction order we pick.
  static CpuDevice* device = new CpuDevice();
  return *device;
}

void setNumThreads(int threads) {
  if (threads < 1) threads = 1;
#ifdef _OPENMP
  omp_set_num_threads(threads);
#endif
}

int numThreads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

}  // namespace imerge
