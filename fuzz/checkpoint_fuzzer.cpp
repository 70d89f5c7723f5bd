// libFuzzer target: the checkpoint reader (io::inspectCheckpoint: header, CRC-32, payload).
// A mutated file almost never passes the CRC, which would keep the fuzzer at the first check,
// so an input is taken as the payload and given a valid header (magic, version, CRC, length;
// docs/checkpoint_format.md); an input that itself starts with the magic is taken as the whole
// file, so the header checks are fuzzed too.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/error.h"
#include "fuzz/fuzz_input_file.h"
#include "io/checkpoint.h"
#include "io/checkpoint_encoding.h"

namespace {

using imerge::io::detail::kHeaderBytes;
using imerge::io::detail::kMagic;

// The file a writer would have produced around `payload` (little-endian, as on x86).
std::vector<uint8_t> withValidHeader(const uint8_t* payload, size_t size) {
  std::vector<uint8_t> file(kHeaderBytes + size);
  const uint32_t version = imerge::io::kCheckpointFormatVersion;
  const uint32_t crc = imerge::io::detail::crc32Update(0, payload, size);
  const uint64_t length = file.size();
  std::memcpy(file.data(), kMagic, 8);
  std::memcpy(file.data() + 8, &version, 4);
  std::memcpy(file.data() + 12, &crc, 4);
  std::memcpy(file.data() + 16, &length, 8);
  if (size > 0) std::memcpy(file.data() + kHeaderBytes, payload, size);
  return file;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const imerge::fuzz::FuzzInputFile input(".ckpt");
  const bool wholeFile = size >= sizeof kMagic && std::memcmp(data, kMagic, sizeof kMagic) == 0;
  const std::vector<uint8_t> file =
      wholeFile ? std::vector<uint8_t>(data, data + size) : withValidHeader(data, size);
  try {
    imerge::io::inspectCheckpoint(input.write(file.data(), file.size()));
  } catch (const imerge::Error&) {
  }
  return 0;
}
