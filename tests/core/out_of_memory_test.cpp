// Out of memory is an imerge::Error that names the tensor's shape, its bytes and the device,
// never a crash; the caching allocator releases its cache and retries before giving up. A
// device with a small capacity, or a backing allocator that fails, reaches that path on a
// machine without a GPU (the CUDA device's cudaMalloc failure takes the same path).
#include <gtest/gtest.h>

#include "core/tensor.h"
#include "support/error_text.h"
#include "support/fake_device.h"

namespace imerge {
namespace {

using testing::HostBackedDevice;

TEST(OutOfMemory, NamesTheShapeBytesAndDevice) {
  HostBackedDevice device(DeviceType::CUDA, "fake-cuda:0", 1 << 20);  // 1 MiB
  const std::string message = testing::errorMessage([&] {
    Tensor::empty({512, 1024}, DType::Float32, device);
  });  // 2 MiB
  testing::expectContains(message, "out of memory on fake-cuda:0");
  testing::expectContains(message, "float32[512, 1024]");
  testing::expectContains(message, "2097152 bytes");
}

TEST(OutOfMemory, IsAnOutOfMemoryErrorWhenTheBackingAllocatorFails) {
  HostBackedDevice device(DeviceType::CPU, "failing", std::numeric_limits<size_t>::max(),
                          [](size_t) -> void* { return nullptr; });
  EXPECT_THROW(Tensor::empty({3, 5}, DType::Int64, device), OutOfMemoryError);
  const std::string message = testing::errorMessage([&] {
    Tensor::empty({3, 5}, DType::Int64, device);
  });
  testing::expectContains(message, "int64[3, 5]");
  testing::expectContains(message, "120 bytes");
}

TEST(OutOfMemory, ReleasesTheCacheAndRetriesBeforeFailing) {
  // Capacity for one 1 MiB block: after the first tensor dies its block sits in the cache; a
  // request of another size only fits once the cache is given back.
  HostBackedDevice device(DeviceType::CPU, "small", (1 << 20) + 4096);
  { Tensor first = Tensor::empty({1 << 18}, DType::Float32, device); }  // 1 MiB, then cached
  EXPECT_GT(device.memoryStats().cachedBytes, 0u);
  // Under half the cached block, so the cache does not hand it out (it keeps big blocks for
  // big requests): only a fresh allocation can serve it.
  Tensor second = Tensor::empty({100000}, DType::Float32, device);
  EXPECT_TRUE(second.defined());
  EXPECT_EQ(device.memoryStats().cachedBytes, 0u);
}

TEST(OutOfMemory, TheDeviceStaysUsableAfterAFailure) {
  HostBackedDevice device(DeviceType::CPU, "small", 1 << 16);
  EXPECT_THROW(Tensor::empty({1 << 20}, DType::Float32, device), OutOfMemoryError);
  Tensor small = Tensor::zeros({16}, DType::Float32, device);
  EXPECT_EQ(small.toVector(), std::vector<float>(16, 0.0f));
  EXPECT_EQ(device.memoryStats().allocatedBytes, CachingAllocator::roundedSize(64));
}

}  // namespace
}  // namespace imerge
