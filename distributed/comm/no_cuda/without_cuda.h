// The one refusal of the device backends in a build without CUDA (no_cuda/ folders only).
#pragma once

namespace imerge::distributed {

// Throws imerge::Error: `what` needs CUDA, which this build lacks, and what to do instead.
[[noreturn]] void refuseWithoutCuda(const char* what);

}  // namespace imerge::distributed
