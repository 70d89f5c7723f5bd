// The CUDA device (issue 6 fills in the kernels). What exists now: a probe that says whether a
// usable GPU is present, and why not when it is not, so `--device cuda` fails with a clear
// message on a machine without a GPU or driver.
#pragma once

#include <string>

namespace imerge {

// Number of usable GPUs; 0 with `whyNone` filled in when there are none (or the build has no
// CUDA). A missing or too-old driver counts as "no GPU", not as a crash.
int cudaDeviceCount(std::string* whyNone = nullptr);

// Throws imerge::Error with the reason when no GPU can be used.
void requireCudaDevice();

}  // namespace imerge
