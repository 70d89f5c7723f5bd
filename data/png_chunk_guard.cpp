#include "data/png_chunk_guard.h"

#include <algorithm>
#include <array>

namespace imerge::data {
namespace {

constexpr std::array<uint8_t, 8> kSignature = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
constexpr size_t kChunkHeaderBytes = 8;  // length, then type, both 4 bytes
constexpr size_t kChunkCrcBytes = 4;

uint32_t bigEndian32(std::span<const uint8_t> bytes, size_t at) {
  return uint32_t{bytes[at]} << 24 | uint32_t{bytes[at + 1]} << 16 | uint32_t{bytes[at + 2]} << 8 |
         bytes[at + 3];
}

}  // namespace

std::string checkPngChunkLengths(std::span<const uint8_t> bytes) {
  if (bytes.size() < kSignature.size() ||
      !std::equal(kSignature.begin(), kSignature.end(), bytes.begin())) {
    return "";
  }
  // The chunks in order, as stbi__parse_png_file reads them, up to IEND.
  size_t at = kSignature.size();
  while (at + kChunkHeaderBytes <= bytes.size()) {
    const uint32_t length = bigEndian32(bytes, at);
    const std::string type(bytes.begin() + static_cast<std::ptrdiff_t>(at + 4),
                           bytes.begin() + static_cast<std::ptrdiff_t>(at + 8));
    const size_t left = bytes.size() - at - kChunkHeaderBytes;
    if (type == "IDAT" && length > left) {
      return "its PNG IDAT chunk at byte " + std::to_string(at) + " declares " +
             std::to_string(length) + " bytes, more than the " + std::to_string(left) +
             " left in the file";
    }
    // Other chunks past the end are skipped by stb_image, which then fails for want of data.
    if (type == "IEND" || length > left) return "";
    at += kChunkHeaderBytes + length + kChunkCrcBytes;
  }
  return "";
}

}  // namespace imerge::data
