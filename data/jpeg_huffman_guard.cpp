#include "data/jpeg_huffman_guard.h"

#include <array>
#include <tuple>

namespace imerge::data {
namespace {

// Marker codes (the byte after 0xFF), ITU T.81 table B.1.
constexpr unsigned kStartOfImage = 0xD8;
constexpr unsigned kStartOfScan = 0xDA;
constexpr unsigned kHuffmanTable = 0xC4;
constexpr unsigned kQuantizationTable = 0xDB;
constexpr unsigned kNumberOfLines = 0xDC;
constexpr unsigned kRestartInterval = 0xDD;
constexpr unsigned kComment = 0xFE;
constexpr unsigned kProgressiveFrame = 0xC2;
constexpr int kMaxHuffmanCodes = 256;  // stb_image's stbi__huffman::values

// The frame headers stb_image decodes: baseline, extended and progressive.
bool isFrameHeader(unsigned marker) {
  return marker >= 0xC0 && marker <= 0xC2;
}
bool isApplicationSegment(unsigned marker) {
  return marker >= 0xE0 && marker <= 0xEF;
}
bool isRestart(unsigned marker) {
  return marker >= 0xD0 && marker <= 0xD7;
}

// The segments stb_image skips or reads by their length field.
bool isLengthSegment(unsigned marker) {
  return isFrameHeader(marker) || marker == kStartOfScan || marker == kQuantizationTable ||
         marker == kNumberOfLines || marker == kRestartInterval || marker == kComment ||
         isApplicationSegment(marker);
}

class JpegWalk {
 public:
  JpegWalk(std::span<const uint8_t> bytes, bool isPrefix) : bytes_(bytes), isPrefix_(isPrefix) {}

  // stb_image reads zeros past the end of a file; past the end of a prefix are bytes not read.
  unsigned byteAt(size_t at) {
    if (at < bytes_.size()) return bytes_[at];
    ranPastPrefix_ = ranPastPrefix_ || isPrefix_;
    return 0;
  }
  unsigned bigEndian16(size_t at) { return byteAt(at) << 8 | byteAt(at + 1); }
  size_t size() const { return bytes_.size(); }
  bool ranPastPrefix() const { return ranPastPrefix_; }

  // The code of the next marker at or after `at`, which moves past it; -1 at the end. Outside
  // entropy-coded data anything that is not 0xFF is skipped, as stb_image's header loop does;
  // inside it 0xFF 0x00 (a stuffed data byte) and restart markers are data, as for its decoder.
  int nextMarker(size_t& at, bool inEntropyData) const {
    for (;;) {
      while (at < bytes_.size() && bytes_[at] != 0xFF) ++at;
      while (at < bytes_.size() && bytes_[at] == 0xFF) ++at;  // fill bytes
      if (at >= bytes_.size()) return -1;
      const unsigned marker = bytes_[at++];
      if (inEntropyData && (marker == 0x00 || isRestart(marker))) continue;
      return static_cast<int>(marker);
    }
  }

 private:
  std::span<const uint8_t> bytes_;
  bool isPrefix_;
  bool ranPastPrefix_ = false;
};

JpegGuardResult needsMoreIf(bool prefix) {
  return {.problem = "", .needsMore = prefix};
}

// The Huffman tables DHT segments have defined so far: stb_image's are malloc'ed, not zeroed,
// so a scan decoding with one never defined reads heap garbage as its code lengths.
struct DefinedTables {
  std::array<bool, 4> dc{};
  std::array<bool, 4> ac{};
};

// Reads the DHT segment whose length field is at `at`, as stbi__process_marker does. Returns the
// problem, or "" with `end` just past the segment; `end` is 0 where stb_image refuses it.
std::string checkHuffmanSegment(JpegWalk& walk, size_t at, DefinedTables& defined, size_t& end) {
  const size_t segmentStart = at - 2;
  int remaining = static_cast<int>(walk.bigEndian16(at)) - 2;
  at += 2;
  end = 0;
  while (remaining > 0) {
    const unsigned classAndId = walk.byteAt(at++);
    const unsigned tableClass = classAndId >> 4, id = classAndId & 15;
    if (tableClass > 1 || id > 3) return "";  // stb_image: "bad DHT header"
    int codes = 0;
    for (int length = 0; length < 16; ++length) codes += static_cast<int>(walk.byteAt(at++));
    if (codes > kMaxHuffmanCodes) {
      return "its JPEG Huffman table (the DHT segment at byte " + std::to_string(segmentStart) +
             ") declares " + std::to_string(codes) + " codes, more than the " +
             std::to_string(kMaxHuffmanCodes) + " a table holds";
    }
    (tableClass == 0 ? defined.dc : defined.ac)[id] = true;
    at += static_cast<size_t>(codes);
    remaining -= 17 + codes;
  }
  if (remaining == 0) end = at;
  return "";
}

// The scan header whose length field is at `at`: "" when every Huffman table its decoding reads
// is defined. As stb_image decodes, a baseline scan reads each component's DC and AC table; a
// progressive one its DC tables in a first DC scan (Ss = 0, Ah = 0), none in a DC refinement,
// and its AC tables in an AC scan (Ss > 0).
std::string checkScanTables(JpegWalk& walk, size_t at, bool progressive,
                            const DefinedTables& defined) {
  const size_t scanStart = at - 2;
  const unsigned components = walk.byteAt(at + 2);
  const size_t spectral = at + 3 + 2 * size_t{components};
  const unsigned spectralStart = walk.byteAt(spectral);
  const unsigned approximationHigh = walk.byteAt(spectral + 2) >> 4;
  const bool readsDc = !progressive || (spectralStart == 0 && approximationHigh == 0);
  const bool readsAc = !progressive || spectralStart > 0;
  for (unsigned i = 0; i < components; ++i) {
    const unsigned tables = walk.byteAt(at + 4 + 2 * size_t{i});
    const unsigned dc = tables >> 4, ac = tables & 15;
    if (dc > 3 || ac > 3) return "";  // stb_image: "bad DC huff", "bad AC huff"
    for (const auto& [reads, id, isDefined, name] :
         {std::tuple{readsDc, dc, defined.dc[dc], "DC"}, {readsAc, ac, defined.ac[ac], "AC"}}) {
      if (reads && !isDefined) {
        return "its JPEG scan at byte " + std::to_string(scanStart) + " decodes with " + name +
               " Huffman table " + std::to_string(id) +
               ", which no DHT segment before it defines (stb_image has no default tables)";
      }
    }
  }
  return "";
}

}  // namespace

JpegGuardResult checkJpegHuffmanTables(std::span<const uint8_t> bytes, JpegScope scope,
                                       bool isPrefix) {
  JpegWalk walk(bytes, isPrefix);
  // stb_image takes a file for a JPEG when its first marker, after fill bytes, is SOI.
  if (bytes.empty() || bytes[0] != 0xFF) return {};
  size_t at = 0;
  const int first = walk.nextMarker(at, /*inEntropyData=*/false);
  if (first == -1) return needsMoreIf(isPrefix);
  if (first != static_cast<int>(kStartOfImage)) return {};

  DefinedTables defined;
  bool sawFrame = false, progressive = false, inEntropyData = false;
  for (;;) {
    const int marker = walk.nextMarker(at, inEntropyData);
    if (marker == -1) return needsMoreIf(isPrefix);
    const auto code = static_cast<unsigned>(marker);
    if (code == kHuffmanTable) {
      size_t end = 0;
      std::string problem = checkHuffmanSegment(walk, at, defined, end);
      if (!problem.empty()) return {.problem = std::move(problem)};
      if (walk.ranPastPrefix()) return needsMoreIf(true);
      if (end == 0) return {};
      at = end;
      inEntropyData = false;
      continue;
    }
    // EOI ends stb_image's decoding; markers it does not know end it with an error.
    if (!isLengthSegment(code)) return {};
    const unsigned length = walk.bigEndian16(at);
    if (walk.ranPastPrefix() || (isPrefix && at + length > walk.size())) {
      return needsMoreIf(true);
    }
    if (length < 2) return {};  // stb_image: "bad ... len"
    if (isFrameHeader(code)) {
      // stbi_info stops after the frame header, which is whole in `bytes`.
      if (scope == JpegScope::kHeader) return {};
      sawFrame = true;
      progressive = code == kProgressiveFrame;
    }
    if (code == kStartOfScan) {
      if (!sawFrame) return {};  // stb_image: "unknown marker" before the frame header
      std::string problem = checkScanTables(walk, at, progressive, defined);
      if (!problem.empty()) return {.problem = std::move(problem)};
    }
    at += length;
    inEntropyData = code == kStartOfScan;
  }
}

}  // namespace imerge::data
