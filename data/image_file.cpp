#include "data/image_file.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <memory>
#include <vector>

#include "core/error.h"
#include "core/input_file.h"
#include "data/jpeg_huffman_guard.h"
#include "data/png_chunk_guard.h"

// The one definition of stb_image in imerge. Only the decoders we read are compiled in.
#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_JPEG
#define STBI_ONLY_PNG
#define STBI_FAILURE_USERMSG
#if __has_include(<stb/stb_image.h>)
#include <stb/stb_image.h>  // Debian's libstb-dev
#else
#include <stb_image.h>
#endif

namespace imerge::data {
namespace {

// Why an image of `width` x `height` pixels (from its header) is not decoded, or "".
std::string tooManyPixels(int width, int height, const PixelLimit& limit) {
  if (int64_t{width} * height <= limit.maxPixels) return "";
  return "its header declares " + std::to_string(width) + "x" + std::to_string(height) +
         " pixels, more than the " + std::to_string(limit.maxPixels) + " this reader decodes" +
         limit.hint;
}

// The file's first `maxBytes` bytes (all of it by default); `isPrefix` says whether more follow.
std::vector<uint8_t> readFile(const std::string& path, bool* isPrefix = nullptr,
                              uint64_t maxBytes = kMaxImageFileBytes) {
  std::ifstream in(path, std::ios::binary);
  IMERGE_CHECK(in.is_open(), "cannot open image ", path, ": ", std::strerror(errno));
  const uint64_t size = checkedInputFileSize(path, kMaxImageFileBytes, "image");
  const auto bytes = static_cast<std::streamsize>(std::min(size, maxBytes));
  if (isPrefix) *isPrefix = size > maxBytes;
  std::vector<uint8_t> contents(static_cast<size_t>(bytes));
  in.read(reinterpret_cast<char*>(contents.data()), bytes);
  IMERGE_CHECK(in.gcount() == bytes, "cannot read image ", path, ": got ", in.gcount(), " of ",
               bytes, " bytes");
  return contents;
}

// How much of a file the header check reads first: a JPEG's segments up to its frame header,
// unless a large EXIF thumbnail or ICC profile comes first (then it reads the whole file).
constexpr uint64_t kHeaderReadBytes = 16 << 10;

struct StbFree {
  void operator()(unsigned char* pixels) const { stbi_image_free(pixels); }
};

}  // namespace

bool isImageFile(const std::filesystem::path& path) {
  std::string extension = path.extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return extension == ".jpg" || extension == ".jpeg" || extension == ".png";
}

std::string checkImageHeader(const std::string& path, const PixelLimit& limit, int& width,
                             int& height) {
  bool isPrefix = false;
  std::vector<uint8_t> bytes = readFile(path, &isPrefix, kHeaderReadBytes);
  JpegGuardResult guard = checkJpegHuffmanTables(bytes, JpegScope::kHeader, isPrefix);
  if (guard.needsMore) {
    bytes = readFile(path);
    guard = checkJpegHuffmanTables(bytes, JpegScope::kHeader, /*isPrefix=*/false);
  }
  if (!guard.problem.empty()) return guard.problem;
  int fileChannels = 0;
  if (!stbi_info_from_memory(bytes.data(), static_cast<int>(bytes.size()), &width, &height,
                             &fileChannels)) {
    return stbi_failure_reason() ? stbi_failure_reason() : "unknown";
  }
  return tooManyPixels(width, height, limit);
}

Tensor decodeImageFile(const std::string& path, int channels, const PixelLimit& limit) {
  IMERGE_CHECK(channels == 1 || channels == 3, "decoding ", path, ": channels must be 1 or 3, got ",
               channels);
  const std::vector<uint8_t> bytes = readFile(path);
  IMERGE_CHECK(bytes.size() <= static_cast<size_t>(std::numeric_limits<int>::max()), "image ", path,
               " is too large for stb_image (", bytes.size(), " bytes)");
  const JpegGuardResult guard =
      checkJpegHuffmanTables(bytes, JpegScope::kWholeFile, /*isPrefix=*/false);
  IMERGE_CHECK(guard.problem.empty(), "cannot decode image ", path, ": ", guard.problem);
  const std::string chunkProblem = checkPngChunkLengths(bytes);
  IMERGE_CHECK(chunkProblem.empty(), "cannot decode image ", path, ": ", chunkProblem);
  int width = 0, height = 0, fileChannels = 0;
  // The header again (the file may have changed since a scan) before decoding allocates.
  if (stbi_info_from_memory(bytes.data(), static_cast<int>(bytes.size()), &width, &height,
                            &fileChannels)) {
    const std::string reason = tooManyPixels(width, height, limit);
    IMERGE_CHECK(reason.empty(), "cannot decode image ", path, ": ", reason);
  }
  std::unique_ptr<unsigned char, StbFree> pixels(stbi_load_from_memory(
      bytes.data(), static_cast<int>(bytes.size()), &width, &height, &fileChannels, channels));
  if (!pixels) {
    IMERGE_FAIL("cannot decode image ", path, ": ",
                stbi_failure_reason() ? stbi_failure_reason() : "unknown error");
  }
  // byte / 255.0f as torchvision's ToTensor; interleaved HWC bytes to planar CHW floats.
  static const std::array<float, 256> kScaled = [] {
    std::array<float, 256> table{};
    for (int value = 0; value < 256; ++value) table[value] = static_cast<float>(value) / 255.0f;
    return table;
  }();
  const int64_t plane = int64_t{height} * width;
  Tensor image = Tensor::empty({channels, height, width});  // [C, H, W]
  float* out = image.data<float>();
  const unsigned char* in = pixels.get();
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t i = 0; i < plane; ++i) out[c * plane + i] = kScaled[in[i * channels + c]];
  }
  return image;
}

}  // namespace imerge::data
