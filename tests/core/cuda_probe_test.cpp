// The CUDA probe: on a machine without a GPU (or a build without CUDA) it reports why, and
// requireCudaDevice() turns that into a clear error instead of a crash.
#include <gtest/gtest.h>

#include "core/cuda/cuda_device.h"
#include "core/error.h"
#include "support/error_text.h"

namespace imerge {
namespace {

TEST(CudaProbe, ExplainsWhyThereIsNoGpu) {
  std::string whyNone;
  const int count = cudaDeviceCount(&whyNone);
  if (count > 0) GTEST_SKIP() << count << " GPU(s) present: the no-GPU path cannot be seen here";
  EXPECT_FALSE(whyNone.empty());
  const std::string message = testing::errorMessage([] { requireCudaDevice(); });
  testing::expectContains(message, "--device cuda");
  testing::expectContains(message, whyNone);
}

TEST(CudaProbe, AnswersTheSameTwice) {
  // The first failed probe must not leave a sticky error that changes the second answer.
  std::string first, second;
  EXPECT_EQ(cudaDeviceCount(&first), cudaDeviceCount(&second));
  EXPECT_EQ(first, second);
}

}  // namespace
}  // namespace imerge
