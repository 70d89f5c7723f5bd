// Which kernels an op runs: those of the device its inputs live on. Every op calls
// runsOnCuda(op, inputs...) once, which also refuses inputs spread over two devices, naming the
// op and both devices, instead of letting a kernel read a pointer of the wrong kind.
//
//   if (runsOnCuda("relu", x)) return cuda::reluForward(x);
//   return cpu::reluForward(x);
//
// Undefined tensors (an absent bias) take no part in the check.
#pragma once

#include "core/tensor.h"

namespace imerge {

namespace detail {
inline void checkSameDevice(const char* op, const Device& first, const Tensor& other) {
  if (!other.defined()) return;
  IMERGE_CHECK(&other.device() == &first, op, ": inputs are on different devices: ", first.name(),
               " and ", other.device().name(), " (", other.describe(),
               "); move them to one device with Tensor::to(device) first");
}
}  // namespace detail

template <typename... Others>
bool runsOnCuda([[maybe_unused]] const char* op, const Tensor& first, const Others&... others) {
  const Device& device = first.device();
  (detail::checkSameDevice(op, device, others), ...);
  return device.type() == DeviceType::CUDA;
}

}  // namespace imerge
