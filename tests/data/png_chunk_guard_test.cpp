// PNGs whose IDAT chunks declare more bytes than the file holds are refused before stb_image
// allocates for them, naming the file, the chunk and both sizes; valid PNGs pass and decode.
#include "data/png_chunk_guard.h"

#include <gtest/gtest.h>

#include <filesystem>
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

const fs::path kCorpus = testing::sourceTree() / "fuzz" / "corpus" / "image";
const fs::path kRgbPng =
    testing::sourceTree() / "tests" / "data" / "fixtures" / "image_folder" / "ant" / "a0.png";

// The byte offset of the first chunk of `type`, walking the chunks from the signature.
size_t chunkAt(const Bytes& png, const std::string& type) {
  for (size_t at = 8; at + 8 <= png.size();) {
    if (std::string(png.begin() + static_cast<std::ptrdiff_t>(at + 4),
                    png.begin() + static_cast<std::ptrdiff_t>(at + 8)) == type) {
      return at;
    }
    at += 12 + (size_t{png[at]} << 24 | size_t{png[at + 1]} << 16 | size_t{png[at + 2]} << 8 |
                png[at + 3]);
  }
  ADD_FAILURE() << "no " << type << " chunk";
  return 0;
}

TEST(PngChunkGuard, ValidPngsPassAndDecode) {
  for (const fs::path& path :
       {kRgbPng, kCorpus / "rgb.png", kCorpus / "rgba.png", kCorpus / "grey.png",
        kCorpus / "palette.png", kCorpus / "optimized.png"}) {
    SCOPED_TRACE(path.string());
    EXPECT_EQ(checkPngChunkLengths(testing::readFileBytes(path)), "");
    EXPECT_NO_THROW(decodeImageFile(path.string(), 3, {}));
  }
}

TEST(PngChunkGuard, AnIdatChunkLongerThanTheFileIsRefusedNamingBothSizes) {
  testing::TempDir dir("png-guard");
  Bytes png = testing::readFileBytes(kRgbPng);
  const size_t idat = chunkAt(png, "IDAT");
  png[idat] = 0x7F;  // 2 GB and more
  png[idat + 1] = png[idat + 2] = png[idat + 3] = 0xFF;
  const fs::path bad = testing::writeFileBytes(dir.path() / "long-idat.png", png);
  const std::string left = std::to_string(png.size() - idat - 8);
  testing::expectContains(testing::errorMessage([&] { decodeImageFile(bad.string(), 3, {}); }),
                          "cannot decode image " + bad.string() + ": its PNG IDAT chunk at byte " +
                              std::to_string(idat) + " declares 2147483647 bytes, more than the " +
                              left + " left in the file");
}

TEST(PngChunkGuard, TheFuzzersFindingIsRefused) {
  // fuzz/image_fuzzer.cpp's input that allocated 2 GB in stb_image, kept in its corpus.
  const fs::path finding = kCorpus / "idat-length.png";
  ASSERT_TRUE(fs::exists(finding)) << finding;
  testing::expectContains(testing::errorMessage([&] { decodeImageFile(finding.string(), 3, {}); }),
                          ": its PNG IDAT chunk at byte ");
}

TEST(PngChunkGuard, FilesThatAreNotPngsAreLeftToTheirDecoder) {
  EXPECT_EQ(checkPngChunkLengths(testing::readFileBytes(kCorpus / "baseline.jpg")), "");
  EXPECT_EQ(checkPngChunkLengths({}), "");
}

}  // namespace
}  // namespace imerge::data
