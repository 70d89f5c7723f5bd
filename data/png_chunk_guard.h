// Refuses the PNGs whose chunks would make Debian's stb_image 2.27 allocate far more than the
// file holds. stb_image grows its buffer for compressed data to the length an IDAT chunk
// declares before reading it, so a 113-byte file declaring a 2 GB chunk allocates 2 GB (found
// by fuzz/image_fuzzer.cpp) and only then fails, the data being missing; a few loader threads
// at once run the machine out of memory. Lengths past the end of the file are refused here,
// before stb_image reads it, which bounds its buffer by twice the file's size.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace imerge::data {

// `bytes` is the whole file. "" when stb_image may decode it, or when it is no PNG (no PNG
// signature first); else why not.
std::string checkPngChunkLengths(std::span<const uint8_t> bytes);

}  // namespace imerge::data
