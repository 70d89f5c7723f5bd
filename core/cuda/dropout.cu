// The dropout mask on a CUDA device: one Philox block (core/cuda/dropout_hash.h) per four
// elements, one thread per block in a grid-stride loop. The seed is one 64-bit draw from the
// caller's Generator per mask, so the mask depends on the generator's state and the element
// index only.
#include <limits>

#include "core/cuda/dropout.h"
#include "core/cuda/dropout_hash.h"
#include "core/cuda/launch.h"

namespace imerge::cuda {

namespace {

// mask [n] = 0 where element i's draw is below p, else scale.
__global__ void dropoutMaskKernel(float* mask, int64_t n, uint64_t seed, float p, float scale) {
  const int64_t groups = (n + 3) / 4;
  for (int64_t group = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; group < groups;
       group += int64_t{blockDim.x} * gridDim.x) {
    const dropout::PhiloxBlock bits = dropout::dropoutBits(seed, static_cast<uint64_t>(group));
    const int64_t first = group * 4;
    for (int word = 0; word < 4 && first + word < n; ++word) {
      mask[first + word] = dropout::maskValue(dropout::uniformFromBits(bits.word[word]), p, scale);
    }
  }
}

}  // namespace

Tensor dropoutMask(const Shape& shape, float p, Generator& generator, Device& device) {
  IMERGE_CHECK(p >= 0.0f && p <= 1.0f, "dropout: probability p = ", p, " is outside [0, 1]");
  IMERGE_CHECK(device.type() == DeviceType::CUDA, "dropout: the mask's device ", device.name(),
               " is not a CUDA device");
  // Drawn even for an empty mask, so the generator advances the same way for every shape.
  const uint64_t seed = generator.nextInt(std::numeric_limits<uint64_t>::max());
  Tensor mask = Tensor::empty(shape, DType::Float32, device);
  const int64_t n = mask.numel();
  if (n == 0) return mask;
  const int64_t groups = (n + 3) / 4;
  dropoutMaskKernel<<<blocksFor(groups), kThreadsPerBlock, 0, streamOf(mask)>>>(
      mask.data<float>(), n, seed, p, dropout::survivorScale(p));
  checkLaunch("dropout");
  return mask;
}

}  // namespace imerge::cuda
