// Turning a failed CUDA, cuBLAS or cuDNN call into an imerge::Error that names the call and the
// library's own description. For .cu files (needs the CUDA headers).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include "core/error.h"

namespace imerge::cuda {

inline void check(cudaError_t status, const char* call) {
  IMERGE_CHECK(status == cudaSuccess, call, " failed: ", cudaGetErrorString(status));
}
inline void check(cublasStatus_t status, const char* call) {
  IMERGE_CHECK(status == CUBLAS_STATUS_SUCCESS, call, " failed: ", cublasGetStatusString(status));
}
inline void check(cudnnStatus_t status, const char* call) {
  IMERGE_CHECK(status == CUDNN_STATUS_SUCCESS, call, " failed: ", cudnnGetErrorString(status));
}

// After a kernel launch: a bad configuration shows up here, a fault in the kernel later (at
// the next synchronising call).
inline void checkLaunch(const char* kernel) {
  check(cudaGetLastError(), kernel);
}

}  // namespace imerge::cuda

#define IMERGE_CUDA_CHECK(call) ::imerge::cuda::check((call), #call)
