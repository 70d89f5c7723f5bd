// The caching allocator: freed blocks are reused, so a loop that repeats the same sizes stops
// calling the system allocator after its first pass; statistics add up.
#include "core/caching_allocator.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <vector>

#include "core/tensor.h"

namespace imerge {
namespace {

// An allocator over malloc that counts what reaches the system.
struct CountingAllocator {
  int allocations = 0;
  int frees = 0;
  CachingAllocator allocator{[this](size_t bytes) {
                               ++allocations;
                               return std::malloc(bytes);
                             },
                             [this](void* ptr) {
                               ++frees;
                               std::free(ptr);
                             }};
};

TEST(CachingAllocator, RoundedSizesCoverTheRequestWithBoundedWaste) {
  EXPECT_EQ(CachingAllocator::roundedSize(1), 512u);
  EXPECT_EQ(CachingAllocator::roundedSize(512), 512u);
  EXPECT_EQ(CachingAllocator::roundedSize(513), 1024u);
  for (size_t bytes : {size_t{1000}, size_t{4097}, size_t{1} << 20, (size_t{1} << 20) + 1,
                       size_t{3'000'000}, size_t{123'456'789}}) {
    const size_t rounded = CachingAllocator::roundedSize(bytes);
    EXPECT_GE(rounded, bytes);
    if (bytes > 512) {
      EXPECT_LE(rounded, bytes + bytes / 4) << bytes;
    }
  }
}

TEST(CachingAllocator, FreedBlocksAreReused) {
  CountingAllocator counting;
  void* first = counting.allocator.allocate(1000);
  counting.allocator.deallocate(first);
  void* second = counting.allocator.allocate(1000);
  EXPECT_EQ(second, first);
  EXPECT_EQ(counting.allocations, 1);
  counting.allocator.deallocate(second);
}

TEST(CachingAllocator, ARepeatingLoopStopsAllocatingFromTheSystem) {
  CountingAllocator counting;
  const std::vector<size_t> sizes = {100, 4096, 4096, 70'000, 3'000'000, 12};
  size_t afterFirstPass = 0;
  for (int step = 0; step < 10; ++step) {
    std::vector<void*> blocks;
    for (size_t bytes : sizes) blocks.push_back(counting.allocator.allocate(bytes));
    for (void* block : blocks) counting.allocator.deallocate(block);
    if (step == 0) afterFirstPass = counting.allocator.stats().systemAllocations;
  }
  EXPECT_EQ(counting.allocator.stats().systemAllocations, afterFirstPass);
  EXPECT_EQ(afterFirstPass, sizes.size());
  EXPECT_EQ(counting.frees, 0);
}

TEST(CachingAllocator, StatsTrackLiveCachedAndPeakBytes) {
  CountingAllocator counting;
  void* a = counting.allocator.allocate(2048);
  void* b = counting.allocator.allocate(4096);
  AllocatorStats stats = counting.allocator.stats();
  EXPECT_EQ(stats.allocatedBytes, 2048u + 4096u);
  EXPECT_EQ(stats.cachedBytes, 0u);
  EXPECT_EQ(stats.peakAllocatedBytes, 2048u + 4096u);
  EXPECT_EQ(stats.systemAllocations, 2u);

  counting.allocator.deallocate(b);
  stats = counting.allocator.stats();
  EXPECT_EQ(stats.allocatedBytes, 2048u);
  EXPECT_EQ(stats.cachedBytes, 4096u);
  EXPECT_EQ(stats.peakAllocatedBytes, 2048u + 4096u);

  counting.allocator.deallocate(a);
  counting.allocator.releaseCached();
  stats = counting.allocator.stats();
  EXPECT_EQ(stats.allocatedBytes, 0u);
  EXPECT_EQ(stats.cachedBytes, 0u);
  EXPECT_EQ(counting.frees, 2);
}

TEST(CachingAllocator, SmallRequestsDoNotPinLargeBlocks) {
  CountingAllocator counting;
  void* large = counting.allocator.allocate(1 << 20);
  counting.allocator.deallocate(large);
  void* small = counting.allocator.allocate(1000);
  EXPECT_NE(small, large);
  EXPECT_EQ(counting.allocations, 2);
  // A request a little smaller than the cached block still reuses it.
  void* nearly = counting.allocator.allocate((1 << 20) - 4096);
  EXPECT_EQ(nearly, large);
  counting.allocator.deallocate(small);
  counting.allocator.deallocate(nearly);
}

TEST(CachingAllocator, LiveBlocksAreDistinct) {
  CountingAllocator counting;
  std::set<void*> blocks;
  for (int i = 0; i < 50; ++i) blocks.insert(counting.allocator.allocate(600));
  EXPECT_EQ(blocks.size(), 50u);
  for (void* block : blocks) counting.allocator.deallocate(block);
}

TEST(CachingAllocator, FreeingAForeignPointerIsAnError) {
  CountingAllocator counting;
  int local = 0;
  EXPECT_THROW(counting.allocator.deallocate(&local), Error);
  counting.allocator.deallocate(nullptr);  // a no-op, like free(nullptr)
}

TEST(CachingAllocator, DestructorReturnsCachedBlocks) {
  int frees = 0;
  {
    CachingAllocator allocator([](size_t bytes) { return std::malloc(bytes); },
                               [&frees](void* ptr) {
                                 ++frees;
                                 std::free(ptr);
                               });
    allocator.deallocate(allocator.allocate(100));
    allocator.deallocate(allocator.allocate(10000));
  }
  EXPECT_EQ(frees, 2);
}

TEST(CachingAllocator, TensorsOnTheCpuDeviceReuseMemoryAcrossSteps) {
  // A training step's pattern: the same shapes allocated and freed every iteration.
  auto step = [] {
    Tensor activations = Tensor::zeros({32, 64, 8, 8});
    Tensor gradient = Tensor::zeros({32, 64, 8, 8});
    Tensor logits = Tensor::zeros({32, 10});
    Tensor labels = Tensor::zeros({32}, DType::Int64);
  };
  step();
  const size_t warm = cpuDevice().memoryStats().systemAllocations;
  for (int i = 0; i < 20; ++i) step();
  EXPECT_EQ(cpuDevice().memoryStats().systemAllocations, warm);
}

}  // namespace
}  // namespace imerge
