#include "core/caching_allocator.h"

#include <new>
#include <utility>

#include "core/error.h"

namespace imerge {

CachingAllocator::CachingAllocator(RawAllocate rawAllocate, RawFree rawFree, size_t capacityBytes)
    : rawAllocate_(std::move(rawAllocate)),
      rawFree_(std::move(rawFree)),
      capacityBytes_(capacityBytes) {}

CachingAllocator::~CachingAllocator() {
  std::lock_guard<std::mutex> lock(mutex_);
  releaseCachedLocked();
}

size_t CachingAllocator::roundedSize(size_t bytes) {
  // Small blocks round to 512 B; large ones to a quarter of their power of two, which bounds
  // the waste at 25% while letting nearby sizes reuse each other's blocks.
  constexpr size_t kSmall = 512;
  if (bytes <= kSmall) return kSmall;
  if (bytes < (size_t{1} << 20)) return (bytes + kSmall - 1) / kSmall * kSmall;
  size_t power = 1;
  while (power < bytes) power <<= 1;
  size_t step = power / 8;
  return (bytes + step - 1) / step * step;
}

void* CachingAllocator::allocate(size_t bytes) {
  const size_t rounded = roundedSize(bytes);
  std::lock_guard<std::mutex> lock(mutex_);
  void* block = nullptr;
  // Reuse the smallest cached block that fits, unless it is more than twice as large: handing
  // a 64 MiB block to a 1 KiB tensor would pin memory that larger tensors need.
  auto found = freeBlocks_.lower_bound(rounded);
  if (found != freeBlocks_.end() && found->first <= 2 * rounded) {
    block = found->second;
    liveBlocks_[block] = found->first;
    stats_.cachedBytes -= found->first;
    stats_.allocatedBytes += found->first;
    freeBlocks_.erase(found);
  } else {
    block = rawAllocateWithinCapacity(rounded);
    if (!block) {
      // Out of memory: give the cache back and try once more before failing.
      releaseCachedLocked();
      block = rawAllocateWithinCapacity(rounded);
    }
    if (!block) {
      throw OutOfMemoryError(detail::concat("out of memory: could not allocate ", bytes, " bytes (",
                                            stats_.allocatedBytes,
                                            " bytes already held by tensors)"));
    }
    ++stats_.systemAllocations;
    liveBlocks_[block] = rounded;
    stats_.allocatedBytes += rounded;
  }
  if (stats_.allocatedBytes > stats_.peakAllocatedBytes) {
    stats_.peakAllocatedBytes = stats_.allocatedBytes;
  }
  return block;
}

void* CachingAllocator::rawAllocateWithinCapacity(size_t bytes) {
  const size_t held = stats_.allocatedBytes + stats_.cachedBytes;
  if (bytes > capacityBytes_ || held > capacityBytes_ - bytes) return nullptr;
  return rawAllocate_(bytes);
}

void CachingAllocator::deallocate(void* ptr) {
  if (!ptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  auto live = liveBlocks_.find(ptr);
  IMERGE_CHECK(live != liveBlocks_.end(), "CachingAllocator: freeing a block it does not own");
  const size_t rounded = live->second;
  liveBlocks_.erase(live);
  stats_.allocatedBytes -= rounded;
  stats_.cachedBytes += rounded;
  freeBlocks_.emplace(rounded, ptr);
}

void CachingAllocator::releaseCached() {
  std::lock_guard<std::mutex> lock(mutex_);
  releaseCachedLocked();
}

void CachingAllocator::releaseCachedLocked() {
  for (auto& [bytes, block] : freeBlocks_) rawFree_(block);
  freeBlocks_.clear();
  stats_.cachedBytes = 0;
}

AllocatorStats CachingAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

}  // namespace imerge
