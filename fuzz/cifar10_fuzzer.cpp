// libFuzzer target: the CIFAR-10 binary batch reader, and one example of each loaded record
// (the label and pixel path a training step takes).
#include <cstddef>
#include <cstdint>

#include "core/error.h"
#include "core/random.h"
#include "data/cifar10.h"
#include "fuzz/fuzz_input_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const imerge::fuzz::FuzzInputFile input("-data_batch_1.bin");
  const std::string& path = input.write(data, size);
  try {
    const imerge::data::Cifar10Dataset dataset({path});
    imerge::Generator generator(0);
    for (int64_t index = 0; index < dataset.size(); ++index) dataset.get(index, generator);
  } catch (const imerge::Error&) {
  }
  return 0;
}
