// How the CUDA kernels trade speed for reproducibility, set once per process before training
// (imerge-train's --deterministic and --no-tf32; the GPU tests' strict mode). These are plain
// C++ and exist in every build.
//
// - allowTf32: convolutions may use the tensor cores' TF32 mode for float32 data, as PyTorch
//   does by default (torch.backends.cudnn.allow_tf32 = True): about 1e-3 relative error, several
//   times the speed. Matrix products through cuBLAS stay in full float32, again as PyTorch's
//   default (torch.backends.cuda.matmul.allow_tf32 = False).
// - deterministic: cuDNN's algorithm search keeps only algorithms that give bit-identical
//   results run to run (PyTorch's torch.backends.cudnn.deterministic), so two runs with the
//   same seed give identical losses.
// - convWorkspaceLimitBytes: the most scratch memory one convolution algorithm may use; the
//   search skips faster algorithms that need more.
#pragma once

#include <cstddef>

namespace imerge::cuda {

struct CudaSettings {
  bool allowTf32 = true;
  bool deterministic = false;
  size_t convWorkspaceLimitBytes = size_t{1} << 30;  // 1 GiB
};

// Applies to convolutions whose algorithm has not been chosen yet: the choice is cached per
// shape and settings, so changing settings later makes new choices rather than reusing old ones.
void setCudaSettings(const CudaSettings& settings);
CudaSettings cudaSettings();

}  // namespace imerge::cuda
