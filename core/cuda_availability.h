// Whether this process can have a CUDA device, and the one place that refuses one when it
// cannot: the entry points that exist in every build. A build without CUDA has no CudaDevice at
// all (core/cuda/ is compiled only with CUDA), so no CUDA tensor can exist there and no kernel
// needs to refuse one; requesting the device is where such a build says no.
#pragma once

#include <string>

namespace imerge {

class CudaDevice;  // core/cuda/cuda_device.h

// Number of usable GPUs; 0 with `whyNone` filled in when there are none (or the build has no
// CUDA). A missing or too-old driver counts as "no GPU", not as a crash.
int cudaDeviceCount(std::string* whyNone = nullptr);

// Throws imerge::Error with the reason when no GPU can be used: "--device cuda: no usable GPU:
// <why>. Use --device cpu, or run on a machine with an NVIDIA GPU and driver".
void requireCudaDevice();

// The process-wide device of GPU `index`, created on first use and never destroyed (tensors in
// static objects may outlive any order we pick). Throws requireCudaDevice()'s clear reason when
// there is no GPU, and names the count when `index` is out of range.
CudaDevice& cudaDevice(int index = 0);

}  // namespace imerge
