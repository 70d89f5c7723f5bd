// libFuzzer target: the IDX reader (MNIST, Fashion-MNIST), plain and gzip-compressed. Any input
// must either load or be refused with imerge::Error; a crash, a sanitizer report, a leak, a
// hang or an allocation past -rss_limit_mb is a finding.
#include <cstddef>
#include <cstdint>

#include "core/error.h"
#include "data/idx_reader.h"
#include "fuzz/fuzz_input_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const imerge::fuzz::FuzzInputFile input("-idx3-ubyte");
  const std::string& path = input.write(data, size);
  // Both readers on every input: the header's rank and type decide which one may accept it.
  try {
    imerge::data::readIdxImages(path);
  } catch (const imerge::Error&) {
  }
  try {
    imerge::data::readIdxLabels(path);
  } catch (const imerge::Error&) {
  }
  return 0;
}
