// Refuses the JPEGs that Debian's stb_image 2.27 would decode out of bounds, both found by
// fuzz/image_fuzzer.cpp within minutes:
//  - a Huffman table (DHT segment) whose 16 code counts sum to more than 256: stb_image builds
//    it into arrays of 256 symbols without checking, and writes past them;
//  - a scan decoding with a Huffman table no DHT segment defined: stb_image's tables are
//    malloc'ed, not zeroed, so it indexes them with heap garbage (and it has no default
//    tables, so a Motion-JPEG frame without DHT segments cannot decode correctly either).
// This guard reads every DHT segment and scan header stb_image could process, before
// stb_image sees the file.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace imerge::data {

enum class JpegScope {
  kHeader,     // the segments up to the frame header (SOF), all that stbi_info reads
  kWholeFile,  // every segment, also those between the scans of a progressive JPEG
};

struct JpegGuardResult {
  std::string problem;     // why stb_image must not read these bytes, or "" when it may
  bool needsMore = false;  // kHeader on a prefix of the file ended before its frame header
};

// `bytes` is the whole file, or for kHeader a prefix of it (`isPrefix`). Files that are not
// JPEGs (no SOI marker first) are nothing to this guard: it returns no problem.
//
// The walk follows stb_image's, and is never stricter: segments by their length, markers after
// fill bytes (and after junk, which stb_image refuses in most places), and after a scan header
// the first 0xFF that is followed by neither a stuffed 0x00 nor a restart marker, which is
// where stb_image's entropy decoder stops too. Where stb_image would refuse the file itself (a
// marker it does not know, a bad DHT header, a length that does not add up) the walk stops:
// the decoder never reaches what follows.
JpegGuardResult checkJpegHuffmanTables(std::span<const uint8_t> bytes, JpegScope scope,
                                       bool isPrefix);

}  // namespace imerge::data
