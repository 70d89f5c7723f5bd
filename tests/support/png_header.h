// A PNG file that is only a header: the signature and an IHDR chunk declaring `width` x
// `height` RGB pixels, with no image data. stbi_info reads its size; decoding it fails. The
// shape of a decompression bomb, without the bytes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>

namespace imerge::testing {

inline void writePngHeaderOnly(const std::filesystem::path& path, uint32_t width, uint32_t height) {
  std::ofstream out(path, std::ios::binary);
  const auto byte = [](uint32_t value, int shift) {
    return static_cast<unsigned char>((value >> shift) & 0xff);
  };
  const unsigned char header[] = {0x89,
                                  'P',
                                  'N',
                                  'G',
                                  '\r',
                                  '\n',
                                  0x1a,
                                  '\n',  // signature
                                  0,
                                  0,
                                  0,
                                  13,
                                  'I',
                                  'H',
                                  'D',
                                  'R',  // IHDR, 13 bytes
                                  byte(width, 24),
                                  byte(width, 16),
                                  byte(width, 8),
                                  byte(width, 0),
                                  byte(height, 24),
                                  byte(height, 16),
                                  byte(height, 8),
                                  byte(height, 0),
                                  8,
                                  2,
                                  0,
                                  0,
                                  0,  // 8 bits, RGB
                                  0,
                                  0,
                                  0,
                                  0};  // CRC (stb does not check it)
  out.write(reinterpret_cast<const char*>(header), sizeof header);
}

}  // namespace imerge::testing
