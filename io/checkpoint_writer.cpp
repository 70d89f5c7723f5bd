// Writing a checkpoint's bytes (contracts in checkpoint_writer.h).
#include "io/checkpoint_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <limits>

#include "core/device.h"
#include "io/checkpoint_encoding.h"

namespace imerge::io::detail {

PayloadWriter::PayloadWriter(int fd, std::string path) : fd_(fd), path_(std::move(path)) {
  buffer_.reserve(kWriteBufferBytes);
}

void PayloadWriter::bytes(const void* data, size_t size) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  crc_ = crc32Update(crc_, bytes, size);
  length_ += size;
  if (buffer_.size() + size > kWriteBufferBytes) flush();
  if (size >= kWriteBufferBytes) {
    writeAll(bytes, size);
  } else {
    buffer_.insert(buffer_.end(), bytes, bytes + size);
  }
}

void PayloadWriter::string(const std::string& text) {
  IMERGE_CHECK(text.size() <= std::numeric_limits<uint32_t>::max(), "checkpoint: a text of ",
               text.size(), " bytes is too long to store");
  scalar<uint32_t>(static_cast<uint32_t>(text.size()));
  bytes(text.data(), text.size());
}

void PayloadWriter::tensor(const std::string& name, const Tensor& value) {
  string(name);
  scalar<uint8_t>(dtypeCode(value.dtype()));
  scalar<uint32_t>(static_cast<uint32_t>(value.ndim()));
  for (int64_t size : value.shape()) scalar<int64_t>(size);
  scalar<uint64_t>(value.bytes());
  // Device tensors go through a host copy; the file is the same whichever device saved it.
  const Tensor host = value.to(cpuDevice());
  bytes(host.rawData(), host.bytes());
}

void PayloadWriter::flush() {
  writeAll(buffer_.data(), buffer_.size());
  buffer_.clear();
}

// write() may write less than asked (signals, pipes); loop until done.
void PayloadWriter::writeAll(const uint8_t* data, size_t size) {
  while (size > 0) {
    const ssize_t written = ::write(fd_, data, size);
    if (written < 0) {
      if (errno == EINTR) continue;
      IMERGE_FAIL("cannot write ", path_, ": ", errnoText(errno));
    }
    data += written;
    size -= static_cast<size_t>(written);
  }
}

TemporaryFile::~TemporaryFile() {
  if (fd_ >= 0) ::close(fd_);
  if (created_) ::unlink(path_.c_str());
}

void TemporaryFile::open() {
  // O_NOFOLLOW: never write through a link someone left at our name.
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd_ < 0) IMERGE_FAIL("cannot create ", path_, ": ", errnoText(errno));
  created_ = true;
}

void TemporaryFile::syncAndClose() {
  if (::fsync(fd_) != 0) IMERGE_FAIL("cannot flush ", path_, " to disk: ", errnoText(errno));
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) IMERGE_FAIL("cannot close ", path_, ": ", errnoText(errno));
}

void TemporaryFile::renameTo(const std::string& target) {
  if (::rename(path_.c_str(), target.c_str()) != 0) {
    IMERGE_FAIL("cannot rename ", path_, " to ", target, ": ", errnoText(errno));
  }
  created_ = false;
}

void syncDirectoryOf(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  const std::string directory = parent.empty() ? std::string(".") : parent.string();
  const int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) IMERGE_FAIL("cannot open directory ", directory, ": ", errnoText(errno));
  const int result = ::fsync(fd);
  const int error = errno;
  ::close(fd);
  // Some file systems cannot sync a directory (EINVAL); there is nothing more to do there.
  if (result != 0 && error != EINVAL) {
    IMERGE_FAIL("cannot flush directory ", directory, " to disk: ", errnoText(error));
  }
}

}  // namespace imerge::io::detail
