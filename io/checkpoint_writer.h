// The bytes of a checkpoint going to disk: buffered and CRC-ed as they are written
// (PayloadWriter), into a temporary file that replaces the old one only once complete and
// flushed (TemporaryFile, syncDirectoryOf), so a failed save never damages a checkpoint.
// Internal to io/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace imerge::io::detail {

// Buffered writes to a file descriptor, keeping the CRC-32 and length of everything written.
class PayloadWriter {
 public:
  PayloadWriter(int fd, std::string path);

  void bytes(const void* data, size_t size);
  template <typename T>
  void scalar(T value) {
    bytes(&value, sizeof value);
  }
  void string(const std::string& text);  // uint32 length, then the bytes
  // name, dtype code, rank, dims, byte count, then the data (device tensors via a host copy).
  void tensor(const std::string& name, const Tensor& value);

  void flush();
  uint32_t crc() const { return crc_; }
  uint64_t length() const { return length_; }
  // Writes `size` bytes unbuffered and uncounted (the header, once the payload is known).
  void writeAll(const uint8_t* data, size_t size);

 private:
  int fd_;
  std::string path_;
  std::vector<uint8_t> buffer_;
  uint32_t crc_ = 0;
  uint64_t length_ = 0;
};

// Removes the temporary file unless the rename succeeded, and closes its descriptor.
class TemporaryFile {
 public:
  explicit TemporaryFile(std::string path) : path_(std::move(path)) {}
  ~TemporaryFile();
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;

  void open();
  void syncAndClose();
  void renameTo(const std::string& target);
  int fd() const { return fd_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
  bool created_ = false;
};

// The rename is durable only once the directory entry is on disk.
void syncDirectoryOf(const std::string& path);

}  // namespace imerge::io::detail
