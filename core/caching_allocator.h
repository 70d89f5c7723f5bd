// A caching allocator: freed blocks are kept in size-keyed free lists and handed out again, so
// a training loop that repeats the same shapes allocates from the system only in its first
// steps. The raw allocate/free functions come from the device (aligned host memory on the CPU,
// cudaMalloc on a GPU). An allocation that cannot be satisfied throws OutOfMemoryError.
#pragma once

#include <cstddef>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <unordered_map>

#include "core/error.h"

namespace imerge {

// Thrown when the raw allocator fails (or the capacity is reached) even after the cache was
// released. Tensor::empty catches it to add the tensor's shape and device to the message.
class OutOfMemoryError : public Error {
 public:
  using Error::Error;
};

struct AllocatorStats {
  size_t allocatedBytes = 0;      // held by live tensors now
  size_t peakAllocatedBytes = 0;  // the most ever held by live tensors at once
  size_t cachedBytes = 0;         // kept in free lists, ready for reuse
  size_t systemAllocations = 0;   // calls to the raw allocator (stays flat in the steady state)
};

class CachingAllocator {
 public:
  using RawAllocate = std::function<void*(size_t bytes)>;
  using RawFree = std::function<void(void* ptr)>;

  // capacityBytes caps what the allocator holds from the system (live plus cached), so a test
  // can reach the out-of-memory path without exhausting a real device.
  CachingAllocator(RawAllocate rawAllocate, RawFree rawFree,
                   size_t capacityBytes = std::numeric_limits<size_t>::max());
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  void* allocate(size_t bytes);
  void deallocate(void* ptr);
  // Returns every cached block to the system (after an out-of-memory, or on request).
  void releaseCached();
  AllocatorStats stats() const;

  // Blocks are rounded up so that slightly different requests share a free list.
  static size_t roundedSize(size_t bytes);

 private:
  void releaseCachedLocked();
  // The raw allocator, or nullptr when it fails or the capacity would be exceeded.
  void* rawAllocateWithinCapacity(size_t bytes);

  RawAllocate rawAllocate_;
  RawFree rawFree_;
  size_t capacityBytes_;
  mutable std::mutex mutex_;
  std::multimap<size_t, void*> freeBlocks_;       // rounded bytes -> block
  std::unordered_map<void*, size_t> liveBlocks_;  // block -> rounded bytes
  AllocatorStats stats_;
};

}  // namespace imerge
