// The CPU's kernels behind the Backend interface (core/backend.h): what CpuDevice::backend()
// returns. Each member forwards to the kernel in core/cpu/ that implements it.
#pragma once

#include "core/backend.h"

namespace imerge {

// The process-wide CPU backend.
const Backend& cpuBackend();

}  // namespace imerge
