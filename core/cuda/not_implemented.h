// The answer of an op that has no CUDA kernel yet: a clear error rather than a CPU kernel
// reading device memory.
#pragma once

#include "core/error.h"

namespace imerge::cuda {

[[noreturn]] inline void notImplemented(const char* op) {
  IMERGE_FAIL("not implemented on CUDA yet: ", op,
              ". Run this model on the CPU (--device cpu) until the CUDA backend has it");
}

}  // namespace imerge::cuda
