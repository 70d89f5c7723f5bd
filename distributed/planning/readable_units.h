// Human-readable quantities for logs and describe() texts: bytes in binary units ("64 KiB",
// "1.2 MiB"), durations in the unit that keeps 1-3 digits before the point ("12.1 us"), and
// bandwidths in decimal units ("5.30 GB/s", as network and MPI benchmarks report them).
#pragma once

#include <cstddef>
#include <string>

namespace imerge::distributed {

std::string readableBytes(size_t bytes);               // "512 B", "8 KiB", "1.2 MiB"
std::string readableSeconds(double seconds);           // "850 ns", "12.1 us", "3.40 ms", "1.25 s"
std::string readableBandwidth(double bytesPerSecond);  // "590 MB/s", "5.30 GB/s"

}  // namespace imerge::distributed
