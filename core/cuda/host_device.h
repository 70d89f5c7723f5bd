// IMERGE_HOST_DEVICE marks the inline functions that hold an own kernel's per-element
// arithmetic and indexing (pooling_math.h, lrn_math.h, dropout_hash.h, batch_norm_math.h,
// flat_index.h): __host__ __device__ under nvcc, so the kernels call them, and nothing under
// g++, so the CPU tests run the same functions against the CPU kernels on a machine without a
// GPU.
#pragma once

#ifdef __CUDACC__
#define IMERGE_HOST_DEVICE __host__ __device__
#else
#define IMERGE_HOST_DEVICE
#endif
