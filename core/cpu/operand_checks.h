// The check every CPU kernel of float32 tensors starts with, one message for all of them.
#pragma once

#include <string>

#include "core/error.h"
#include "core/tensor.h"

namespace imerge::cpu {

// `tensor` is defined, float32 and on the CPU; else an error naming `op` and the tensor.
inline void checkFloat32OnCpu(const char* op, const Tensor& tensor) {
  IMERGE_CHECK(tensor.defined() && tensor.dtype() == DType::Float32, op, ": expects float32, got ",
               tensor.defined() ? tensor.describe() : std::string("an undefined tensor"));
  IMERGE_CHECK(tensor.device().type() == DeviceType::CPU, op, ": ", tensor.describe(), " is on ",
               tensor.device().name(), ", this kernel runs on the CPU");
}

}  // namespace imerge::cpu
