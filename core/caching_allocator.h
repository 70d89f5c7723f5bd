// A caching allocator: freed blocks are kept in size-keyed free lists and handed out again, so
// a training loop that repeats the same shapes allocates from the system only in its first
// steps. The raw allocate/free functions come from the device (aligned host memory on the CPU,
// cudaMalloc on a GPU).
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <unordered_map>

namespace imerge {

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

  CachingAllocator(RawAllocate rawAllocate, RawFree rawFree);
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

  RawAllocate rawAllocate_;
  RawFree rawFree_;
  mutable std::mutex mutex_;
  std::multimap<size_t, void*> freeBlocks_;       // rounded bytes -> block
  std::unordered_map<void*, size_t> liveBlocks_;  // block -> rounded bytes
  AllocatorStats stats_;
};

}  // namespace imerge
