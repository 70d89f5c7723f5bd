// The CUDA probe: on a machine without a GPU (or a build without CUDA) it reports why, and
// requireCudaDevice() turns that into a clear error instead of a crash.
#include <gtest/gtest.h>

#include "core/cuda_availability.h"
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

// A build without CUDA has no CudaDevice: asking for one is refused, in the words imerge-train
// prints for --device cuda (tests/apps looks for them too).
TEST(CudaProbe, ABuildWithoutCudaRefusesACudaDevice) {
#if IMERGE_HAVE_CUDA
  GTEST_SKIP() << "this build has CUDA";
#else
  const std::string expected =
      "--device cuda: no usable GPU: this build of imerge has no CUDA support (nvcc was not "
      "found at build time). Use --device cpu, or run on a machine with an NVIDIA GPU and driver";
  std::string whyNone;
  EXPECT_EQ(cudaDeviceCount(&whyNone), 0);
  testing::expectContains(testing::errorMessage([] { requireCudaDevice(); }), expected);
  testing::expectContains(testing::errorMessage([] { cudaDevice(0); }), expected);
#endif
}

}  // namespace
}  // namespace imerge
