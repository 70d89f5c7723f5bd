// libFuzzer target: the PNG/JPEG path of image folders and imerge-predict (data/image_file.h):
// the header check, then the decode within a pixel limit. The limit is 1 megapixel, so that a
// header the check lets through cannot by itself exceed the fuzzer's memory limit, and one
// input's two decodes stay well inside its 10 s (a 4-megapixel one took 1.6 s under ASan, and
// past 10 s on a machine busy compiling).
#include <cstddef>
#include <cstdint>

#include "core/error.h"
#include "data/image_file.h"
#include "fuzz/fuzz_input_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const imerge::fuzz::FuzzInputFile input(".png");
  const std::string& path = input.write(data, size);
  const imerge::data::PixelLimit limit{.maxPixels = int64_t{1} << 20, .hint = ""};
  int width = 0, height = 0;
  if (!imerge::data::checkImageHeader(path, limit, width, height).empty()) return 0;
  // Both channel counts: greyscale and RGB take different conversions.
  for (const int channels : {1, 3}) {
    try {
      imerge::data::decodeImageFile(path, channels, limit);
    } catch (const imerge::Error&) {
    }
  }
  return 0;
}
