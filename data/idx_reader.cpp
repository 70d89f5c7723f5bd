#include "data/idx_reader.h"

#include <zlib.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "core/input_file.h"

namespace imerge::data {
namespace {

constexpr uint8_t kUnsignedByteType = 0x08;
constexpr int kImageRank = 3;  // [count, rows, cols]
constexpr int kLabelRank = 1;  // [count]
// A 1 MiB buffer instead of zlib's 8 KiB one means fewer read() calls and inflate restarts; the
// load is then bound by inflate itself (0.4 s for Fashion-MNIST train here, as fast as gzip -dc).
constexpr unsigned kReadBufferBytes = 1u << 20;
// gzread takes an unsigned count; stay far below its limit per call.
constexpr size_t kMaxReadChunkBytes = size_t{1} << 30;
// The most memory committed ahead of the bytes that back it (see readIdx).
constexpr size_t kMaxGrowBytes = size_t{1} << 26;  // 64 MiB: all of (Fashion-)MNIST in one read

constexpr const char* kWhereToGetData =
    ". Fashion-MNIST: `apt-get install dataset-fashion-mnist` puts it in "
    "/usr/share/datasets/fashion-mnist; MNIST: put its four *-ubyte[.gz] files in one directory";

struct GzFileCloser {
  void operator()(gzFile_s* file) const { gzclose(file); }
};
using GzFile = std::unique_ptr<gzFile_s, GzFileCloser>;

// An IDX file's declared sizes and its raw unsigned-byte payload.
struct IdxContents {
  std::vector<int64_t> sizes;
  std::vector<uint8_t> bytes;  // product(sizes) bytes, row-major
};

std::string hexByte(uint8_t byte) {
  static constexpr char kHex[] = "0123456789abcdef";
  return {kHex[byte >> 4], kHex[byte & 0xf]};
}

std::string describeMagic(const std::array<uint8_t, 4>& magic) {
  return hexByte(magic[0]) + " " + hexByte(magic[1]) + " " + hexByte(magic[2]) + " " +
         hexByte(magic[3]);
}

const char* typeName(uint8_t type) {
  switch (type) {
    case 0x08:
      return "unsigned byte";
    case 0x09:
      return "signed byte";
    case 0x0B:
      return "int16";
    case 0x0C:
      return "int32";
    case 0x0D:
      return "float32";
    case 0x0E:
      return "float64";
    default:
      return "unknown";
  }
}

GzFile openIdxFile(const std::string& path) {
  // gzopen reads plain files as they are and inflates gzip ones (it checks the 1f 8b magic).
  errno = 0;
  GzFile file(gzopen(path.c_str(), "rb"));
  if (!file) {
    // gzopen leaves errno at 0 only when it could not allocate its own state.
    const char* reason = errno != 0 ? std::strerror(errno) : "zlib is out of memory";
    IMERGE_FAIL("cannot open ", path, ": ", reason, kWhereToGetData);
  }
  gzbuffer(file.get(), kReadBufferBytes);
  return file;
}

[[noreturn]] void failRead(gzFile file, const std::string& path) {
  int code = Z_OK;
  const char* message = gzerror(file, &code);
  std::string reason = code == Z_ERRNO ? std::strerror(errno) : message;
  // zlib's own message starts with the path; drop it so the path is named once.
  const std::string prefix = path + ": ";
  if (reason.starts_with(prefix)) reason.erase(0, prefix.size());
  IMERGE_FAIL("cannot read ", path, ": ", reason,
              code == Z_DATA_ERROR ? " (the gzip data is corrupt)" : "");
}

// Reads until `count` bytes or the end of the data; returns how many arrived.
size_t readUpTo(gzFile file, const std::string& path, uint8_t* destination, size_t count) {
  size_t total = 0;
  while (total < count) {
    const auto chunk = static_cast<unsigned>(std::min(count - total, kMaxReadChunkBytes));
    const int got = gzread(file, destination + total, chunk);
    if (got < 0) failRead(file, path);
    if (got == 0) break;
    total += static_cast<size_t>(got);
  }
  return total;
}

// A gzip stream cut short reads as a plain end of data; gzerror tells the two apart.
bool gzipEndedEarly(gzFile file) {
  int code = Z_OK;
  gzerror(file, &code);
  return code == Z_BUF_ERROR;
}

IdxContents readIdx(const std::string& path, int expectedRank, const char* what) {
  GzFile owner = openIdxFile(path);
  gzFile file = owner.get();
  // A gzip file is at most as large as what it inflates to, give or take its framing.
  const uint64_t fileBytes = checkedInputFileSize(path, kMaxIdxDataBytes + 4096, "IDX file");

  std::array<uint8_t, 4> magic{};
  const size_t magicBytes = readUpTo(file, path, magic.data(), magic.size());
  IMERGE_CHECK(magicBytes == magic.size(), path,
               " is truncated: expected a 4-byte IDX header, got ", magicBytes, " bytes",
               gzipEndedEarly(file) ? " (the gzip stream ends early)" : "");
  IMERGE_CHECK(magic[0] == 0 && magic[1] == 0, path, " is not an IDX file: its magic is ",
               describeMagic(magic), ", expected 00 00 08 0", expectedRank, " for ", what);
  IMERGE_CHECK(magic[2] == kUnsignedByteType, path, ": element type 0x", hexByte(magic[2]), " (",
               typeName(magic[2]), ") is not supported; ", what,
               " must be unsigned bytes (type 0x08)");
  const int rank = magic[3];
  IMERGE_CHECK(rank == expectedRank, path, " has rank ", rank, " but ", what, " need rank ",
               expectedRank, expectedRank == kImageRank ? " [count, rows, cols]" : " [count]",
               rank == kLabelRank ? " (is it a labels file?)"
                                  : (rank == kImageRank ? " (is it an images file?)" : ""));

  std::vector<uint8_t> sizeBytes(static_cast<size_t>(rank) * 4);
  const size_t sizeBytesRead = readUpTo(file, path, sizeBytes.data(), sizeBytes.size());
  IMERGE_CHECK(sizeBytesRead == sizeBytes.size(), path, " is truncated: expected ",
               sizeBytes.size(), " bytes of sizes after the magic, got ", sizeBytesRead);

  IdxContents contents;
  uint64_t dataBytes = 1;
  for (int axis = 0; axis < rank; ++axis) {
    const uint8_t* big = &sizeBytes[static_cast<size_t>(axis) * 4];
    const uint64_t size = (uint64_t{big[0]} << 24) | (uint64_t{big[1]} << 16) |
                          (uint64_t{big[2]} << 8) | uint64_t{big[3]};
    contents.sizes.push_back(static_cast<int64_t>(size));
    // Three 32-bit sizes can overflow 64 bits; no real file gets near 2^62 bytes anyway.
    IMERGE_CHECK(size == 0 || dataBytes <= (uint64_t{1} << 62) / size, path,
                 " declares an impossible size ", shapeToString(contents.sizes));
    dataBytes *= size;
  }
  IMERGE_CHECK(dataBytes <= kMaxIdxDataBytes, path, " declares ", shapeToString(contents.sizes),
               ": ", dataBytes, " data bytes, more than the ", kMaxIdxDataBytes,
               " this reader accepts (data/idx_reader.h)");
  // Uncompressed, the header must account for the file's size exactly: checked before reading.
  const uint64_t headerBytes = 4 + 4 * static_cast<uint64_t>(rank);
  IMERGE_CHECK(!gzdirect(file) || headerBytes + dataBytes <= fileBytes, path,
               " is truncated: its header ", shapeToString(contents.sizes), " needs ", dataBytes,
               " data bytes, but the file has ", fileBytes - headerBytes, " after the header");

  // Grow in steps of at most kMaxGrowBytes, so a header that overstates the size costs memory
  // only as far as real bytes arrive; a genuine file up to that size is one read, no copies.
  size_t got = 0;
  while (got < dataBytes) {
    const auto want = static_cast<size_t>(std::min<uint64_t>(dataBytes - got, kMaxGrowBytes));
    contents.bytes.resize(got + want);
    const size_t arrived = readUpTo(file, path, contents.bytes.data() + got, want);
    got += arrived;
    if (arrived < want) break;
  }
  contents.bytes.resize(got);
  IMERGE_CHECK(got == dataBytes, path, " is truncated: its header ", shapeToString(contents.sizes),
               " needs ", dataBytes, " data bytes, got ", got,
               gzipEndedEarly(file) ? " (the gzip stream ends early)" : "");

  // One more read checks the gzip trailer (CRC and length) and catches a file longer than its
  // header says, which would mean the header or the file is not what it claims.
  uint8_t extra = 0;
  const size_t extraBytes = readUpTo(file, path, &extra, 1);
  IMERGE_CHECK(extraBytes == 0, path, " has data after the ", dataBytes, " bytes its header ",
               shapeToString(contents.sizes), " declares");
  IMERGE_CHECK(!gzipEndedEarly(file), path,
               " is truncated: the gzip stream ends before its trailer");
  return contents;
}

std::string findIdxFile(const std::string& directory, const std::string& split,
                        const std::string& kind) {
  const std::filesystem::path base =
      std::filesystem::path(directory) / (split + "-" + kind + "-ubyte");
  const std::string compressed = base.string() + ".gz";
  std::error_code ignored;
  if (std::filesystem::exists(compressed, ignored)) return compressed;
  if (std::filesystem::exists(base, ignored)) return base.string();
  IMERGE_FAIL("cannot open ", compressed, ": No such file or directory (nor ", base.string(),
              "); MNIST and Fashion-MNIST name their splits \"train\" and \"t10k\"",
              kWhereToGetData);
}

}  // namespace

Tensor readIdxImages(const std::string& path) {
  const IdxContents contents = readIdx(path, kImageRank, "images");
  const int64_t count = contents.sizes[0];
  const int64_t rows = contents.sizes[1];
  const int64_t cols = contents.sizes[2];

  // A table of byte / 255.0f gives the same floats as torchvision's ToTensor (a division, not a
  // multiplication by 1/255, which differs in the last bit for some bytes).
  std::array<float, 256> scaled{};
  for (int value = 0; value < 256; ++value) scaled[value] = static_cast<float>(value) / 255.0f;

  Tensor images = Tensor::empty({count, 1, rows, cols}, DType::Float32);  // [N, 1, H, W]
  float* out = images.data<float>();
  const uint8_t* in = contents.bytes.data();
  const size_t total = contents.bytes.size();
  for (size_t i = 0; i < total; ++i) out[i] = scaled[in[i]];
  return images;
}

Tensor readIdxLabels(const std::string& path) {
  const IdxContents contents = readIdx(path, kLabelRank, "labels");
  const int64_t count = contents.sizes[0];
  Tensor labels = Tensor::empty({count}, DType::Int64);  // [N]
  int64_t* out = labels.data<int64_t>();
  for (int64_t i = 0; i < count; ++i) out[i] = contents.bytes[static_cast<size_t>(i)];
  return labels;
}

IdxDataset loadIdxDataset(const std::string& directory, const std::string& split) {
  const std::string imagesPath = findIdxFile(directory, split, "images-idx3");
  const std::string labelsPath = findIdxFile(directory, split, "labels-idx1");
  IdxDataset dataset{readIdxImages(imagesPath), readIdxLabels(labelsPath), labelsPath};
  IMERGE_CHECK(dataset.images.dim(0) == dataset.labels.dim(0),
               "image/label count mismatch: ", imagesPath, " holds ", dataset.images.dim(0),
               " images but ", labelsPath, " holds ", dataset.labels.dim(0),
               " labels; are both from the same split?");
  return dataset;
}

}  // namespace imerge::data
