// The readers under fuzzing take paths, as imerge-train gives them, so each input is first
// written to a file: one per fuzzer process, in /dev/shm when there is one (no disk per run),
// removed when the process ends normally.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>

namespace imerge::fuzz {

class FuzzInputFile {
 public:
  // `suffix` is the name's ending (".png"): some readers look at it.
  explicit FuzzInputFile(const std::string& suffix) {
    const std::filesystem::path folder = std::filesystem::is_directory("/dev/shm")
                                             ? "/dev/shm"
                                             : std::filesystem::temp_directory_path();
    path_ = (folder / ("imerge-fuzz-" + std::to_string(getpid()) + suffix)).string();
  }
  ~FuzzInputFile() { std::remove(path_.c_str()); }
  FuzzInputFile(const FuzzInputFile&) = delete;
  FuzzInputFile& operator=(const FuzzInputFile&) = delete;

  // Replaces the file's contents with `size` bytes; returns its path.
  const std::string& write(const uint8_t* data, size_t size) const {
    std::FILE* file = std::fopen(path_.c_str(), "wb");
    if (file == nullptr) std::abort();  // the fuzzer's own failure, not the reader's
    if (size > 0 && std::fwrite(data, 1, size, file) != size) std::abort();
    std::fclose(file);
    return path_;
  }

 private:
  std::string path_;
};

}  // namespace imerge::fuzz
