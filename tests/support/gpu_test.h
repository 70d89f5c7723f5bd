// What the GPU tests share (tests/cuda/, tests/distributed/runtime/data_parallel_gpu_mpitest.cpp):
// skipping, saying why, where they cannot run; strict CUDA settings for a test's duration; and
// the comparison of a CUDA result with the CPU kernels' result on the same inputs. Compiles in
// every build: without CUDA, cudaDeviceCount() finds no GPU and says why, so every test skips.
// The random operands are testing::randomTensor (support/gradcheck.h), as in the CPU tests.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "core/cuda/cuda_device.h"
#include "core/gpu_policy/cuda_settings.h"
#include "core/tensor.h"
#include "support/compare.h"

// Skips the running test with `reason` (a std::string) unless it is empty. Macros, because
// GTEST_SKIP() returns from the test body.
#define SKIP_FOR_REASON(reason)       \
  do {                                \
    const std::string why = (reason); \
    if (!why.empty()) {               \
      GTEST_SKIP() << why;            \
    }                                 \
  } while (0)

// Skips the running test, with the reason cudaDeviceCount() gives, where no GPU is usable.
#define SKIP_WITHOUT_GPU() SKIP_FOR_REASON(::imerge::testing::whyNoGpu())

namespace imerge::testing {

// "no usable GPU: <why>" on a machine without a usable GPU, "" where there is one.
inline std::string whyNoGpu() {
  std::string whyNone;
  return cudaDeviceCount(&whyNone) == 0 ? "no usable GPU: " + whyNone : std::string();
}

// Strict float32 (no TF32) and deterministic algorithms while it lives; the settings it found
// come back when it goes, pass or fail.
class StrictCudaSettings {
 public:
  StrictCudaSettings() : saved_(cuda::cudaSettings()) {
    cuda::setCudaSettings({.allowTf32 = false, .deterministic = true});
  }
  ~StrictCudaSettings() { cuda::setCudaSettings(saved_); }
  StrictCudaSettings(const StrictCudaSettings&) = delete;
  StrictCudaSettings& operator=(const StrictCudaSettings&) = delete;

 private:
  cuda::CudaSettings saved_;
};

// A CUDA kernel's result against the CPU kernel's on the same inputs: both defined, the same
// shape, onGpu on a CUDA device, and |gpu - cpu| <= tolerance * (1 + |cpu|) elementwise, with
// no NaN or infinity on either side (support/compare.h), the worst offender reported with `what`.
inline void expectClose(const Tensor& onGpu, const Tensor& onCpu, const std::string& what = "",
                        float tolerance = 1e-4f) {
  ASSERT_TRUE(onGpu.defined()) << what << " is undefined on the GPU";
  ASSERT_TRUE(onCpu.defined()) << what << " is undefined on the CPU";
  ASSERT_EQ(onGpu.shape(), onCpu.shape()) << what;
  ASSERT_EQ(onGpu.device().type(), DeviceType::CUDA) << what;
  expectClose(onGpu.toVector(), onCpu, what, tolerance);
}

}  // namespace imerge::testing
