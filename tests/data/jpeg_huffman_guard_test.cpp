// JPEGs whose Huffman tables would make stb_image 2.27 write out of bounds are refused, naming
// the file and the segment, wherever stb_image would meet the table: before the frame header
// (also past a large EXIF segment), between a baseline scan and its end, between the scans of a
// progressive JPEG, and in the inputs the image fuzzer found; so are scans that decode with a
// table never defined. Bytes that only look like a table,
// inside a segment stb_image skips, are not refused, and valid JPEGs still decode.
#include "data/jpeg_huffman_guard.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <utility>
#include <vector>

#include "data/image_file.h"
#include "support/error_text.h"
#include "support/file_bytes.h"
#include "support/source_tree.h"
#include "support/temp_dir.h"

namespace imerge::data {
namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<uint8_t>;
using testing::errorMessage;
using testing::expectContains;
using testing::readFileBytes;
using testing::writeFileBytes;

const fs::path kFixtures = testing::sourceTree() / "tests" / "data" / "fixtures";
const fs::path kBaseline = kFixtures / "image_folder" / "ant" / "a1.jpg";
const fs::path kProgressive = kFixtures / "jpeg" / "progressive.jpg";
const std::string kTooManyCodes = "declares 300 codes, more than the 256 a table holds";

// 0xFF, the marker code, the big-endian length (which counts itself) and the payload.
Bytes segment(uint8_t marker, const Bytes& payload) {
  const size_t length = payload.size() + 2;
  Bytes bytes(2 + length);
  bytes[0] = 0xFF;
  bytes[1] = marker;
  bytes[2] = static_cast<uint8_t>(length >> 8);
  bytes[3] = static_cast<uint8_t>(length);
  std::copy(payload.begin(), payload.end(), bytes.begin() + 4);
  return bytes;
}

// A DHT segment with one DC table of 100 + 100 + 100 codes of 9, 10 and 11 bits.
Bytes oversizedHuffmanTable() {
  Bytes payload(17 + 300, 0);  // table class and id 0, 16 code counts, 300 symbols
  payload[9] = payload[10] = payload[11] = 100;
  return segment(0xC4, payload);
}

Bytes insertedAt(Bytes bytes, size_t at, const Bytes& inserted) {
  bytes.insert(bytes.begin() + static_cast<std::ptrdiff_t>(at), inserted.begin(), inserted.end());
  return bytes;
}

std::string headerProblem(const fs::path& path) {
  int width = 0, height = 0;
  return checkImageHeader(path.string(), {}, width, height);
}

std::string decodeError(const fs::path& path) {
  return errorMessage([&] { decodeImageFile(path.string(), 3, {}); });
}

TEST(JpegHuffmanGuard, ValidBaselineAndProgressiveJpegsPassAndDecode) {
  const fs::path corpus = testing::sourceTree() / "fuzz" / "corpus" / "image";
  for (const fs::path& path : {kBaseline, kProgressive, corpus / "baseline.jpg",
                               corpus / "grey.jpg", corpus / "progressive.jpg"}) {
    SCOPED_TRACE(path.string());
    for (const JpegScope scope : {JpegScope::kHeader, JpegScope::kWholeFile}) {
      const JpegGuardResult result = checkJpegHuffmanTables(readFileBytes(path), scope, false);
      EXPECT_EQ(result.problem, "");
      EXPECT_FALSE(result.needsMore);
    }
    EXPECT_EQ(headerProblem(path), "");
  }
  // make_fixtures.py's pattern (8x, 8y, 4 (x + y)) at quality 90: within a few levels.
  const Tensor image = decodeImageFile(kProgressive.string(), 3, {});
  ASSERT_EQ(image.shape(), Shape({3, 32, 32}));
  const float* pixels = image.data<float>();
  double error = 0;
  for (int y = 0; y < 32; ++y) {
    for (int x = 0; x < 32; ++x) {
      const int expected[3] = {x * 8, y * 8, (x + y) * 4};
      for (int c = 0; c < 3; ++c) {
        error += std::abs(pixels[(c * 32 + y) * 32 + x] * 255.0 - expected[c]);
      }
    }
  }
  EXPECT_LT(error / (3 * 32 * 32), 4.0);
}

TEST(JpegHuffmanGuard, ATableOfMoreThan256CodesBeforeTheFrameIsRefusedByTheHeaderCheck) {
  testing::TempDir dir("jpeg-guard-header");
  const fs::path bad = writeFileBytes(
      dir.path() / "bad.jpg", insertedAt(readFileBytes(kBaseline), 2, oversizedHuffmanTable()));
  EXPECT_EQ(headerProblem(bad),
            "its JPEG Huffman table (the DHT segment at byte 2) " + kTooManyCodes);
  expectContains(decodeError(bad), "cannot decode image " + bad.string() +
                                       ": its JPEG Huffman table (the DHT segment at byte 2) " +
                                       kTooManyCodes);
}

TEST(JpegHuffmanGuard, ATableAfterTheScanIsRefusedBeforeDecoding) {
  testing::TempDir dir("jpeg-guard-scan");
  // Baseline: just before EOI, after the entropy-coded data, where stb_image reads markers on.
  const Bytes baseline = readFileBytes(kBaseline);
  const size_t endOfImage = baseline.size() - 2;
  const fs::path afterScan = writeFileBytes(
      dir.path() / "after-scan.jpg", insertedAt(baseline, endOfImage, oversizedHuffmanTable()));
  // stbi_info stops at the frame header, so only the decode meets this table.
  EXPECT_EQ(headerProblem(afterScan), "");
  expectContains(decodeError(afterScan),
                 "(the DHT segment at byte " + std::to_string(endOfImage) + ") " + kTooManyCodes);

  // Progressive: between its first and second scan (the fixture's third DHT is at byte 261).
  const Bytes progressive = readFileBytes(kProgressive);
  ASSERT_EQ(progressive.at(261), 0xFF);
  ASSERT_EQ(progressive.at(262), 0xC4);
  const fs::path betweenScans = writeFileBytes(
      dir.path() / "between-scans.jpg", insertedAt(progressive, 261, oversizedHuffmanTable()));
  EXPECT_EQ(headerProblem(betweenScans), "");
  expectContains(decodeError(betweenScans), "(the DHT segment at byte 261) " + kTooManyCodes);
}

TEST(JpegHuffmanGuard, ATablePastALargeExifSegmentIsStillFoundByTheHeaderCheck) {
  testing::TempDir dir("jpeg-guard-exif");
  const Bytes exif = segment(0xE1, Bytes(40000, 0x45));
  const Bytes bytes =
      insertedAt(insertedAt(readFileBytes(kBaseline), 2, oversizedHuffmanTable()), 2, exif);
  // The header check reads a prefix first; the table lies beyond it, so it reads on.
  const Bytes prefix(bytes.begin(), bytes.begin() + (16 << 10));
  EXPECT_TRUE(checkJpegHuffmanTables(prefix, JpegScope::kHeader, true).needsMore);
  const fs::path bad = writeFileBytes(dir.path() / "exif.jpg", bytes);
  EXPECT_EQ(headerProblem(bad), "its JPEG Huffman table (the DHT segment at byte " +
                                    std::to_string(exif.size() + 2) + ") " + kTooManyCodes);
}

TEST(JpegHuffmanGuard, BytesThatOnlyLookLikeATableInsideASkippedSegmentAreNotRefused) {
  testing::TempDir dir("jpeg-guard-lookalike");
  // An APP1 segment whose payload holds 0xFF 0xC4 and 16 counts of 255: stb_image skips it.
  Bytes payload(5 + 16, 0xFF);
  payload[1] = 0xC4;
  payload[2] = 0x01;
  payload[3] = 0x13;
  payload[4] = 0x00;
  const Bytes original = readFileBytes(kBaseline);
  const fs::path lookalike =
      writeFileBytes(dir.path() / "lookalike.jpg", insertedAt(original, 2, segment(0xE1, payload)));
  EXPECT_EQ(headerProblem(lookalike), "");
  const Tensor decoded = decodeImageFile(lookalike.string(), 3, {});
  const Tensor expected = decodeImageFile(kBaseline.string(), 3, {});
  ASSERT_EQ(decoded.shape(), expected.shape());
  for (int64_t i = 0; i < expected.numel(); ++i) {
    ASSERT_EQ(decoded.data<float>()[i], expected.data<float>()[i]) << "at " << i;
  }
}

TEST(JpegHuffmanGuard, AScanDecodingWithATableNeverDefinedIsRefused) {
  testing::TempDir dir("jpeg-guard-undefined");
  // The fixture without its four DHT segments (bytes 177 to 609): its scan, at byte 177 then,
  // names DC and AC table 0 for its first component.
  Bytes bytes = readFileBytes(kBaseline);
  ASSERT_EQ(bytes.at(609 + 1), 0xDA);
  bytes.erase(bytes.begin() + 177, bytes.begin() + 609);
  const fs::path bad = writeFileBytes(dir.path() / "no-tables.jpg", bytes);
  EXPECT_EQ(headerProblem(bad), "");
  expectContains(decodeError(bad), "cannot decode image " + bad.string() +
                                       ": its JPEG scan at byte 177 decodes with DC Huffman "
                                       "table 0, which no DHT segment before it defines");
  // The progressive fixture's first scans are DC scans naming AC table 0 before any AC table is
  // defined; they do not read it, so it passes (ValidBaselineAndProgressiveJpegsPassAndDecode).
}

TEST(JpegHuffmanGuard, TheFuzzersFindingsAreRefused) {
  // fuzz/image_fuzzer.cpp's inputs that tripped UBSan in stb_image, kept in its corpus.
  const fs::path corpus = testing::sourceTree() / "fuzz" / "corpus" / "image";
  for (const auto& [name, problem] :
       {std::pair{"dht-overflow.jpg", ": its JPEG Huffman table (the DHT segment at byte "},
        {"undefined-table.jpg", ": its JPEG scan at byte "}}) {
    const fs::path finding = corpus / name;
    ASSERT_TRUE(fs::exists(finding)) << finding;
    expectContains(decodeError(finding), "cannot decode image " + finding.string() + problem);
  }
}

TEST(JpegHuffmanGuard, FilesThatAreNotJpegsAreLeftToTheirDecoder) {
  EXPECT_EQ(checkJpegHuffmanTables(readFileBytes(kFixtures / "image_folder" / "ant" / "a0.png"),
                                   JpegScope::kWholeFile, false)
                .problem,
            "");
  EXPECT_EQ(checkJpegHuffmanTables({}, JpegScope::kWholeFile, false).problem, "");
}

}  // namespace
}  // namespace imerge::data
