#include "core/input_file.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"

namespace imerge {
namespace {

const char* fileTypeName(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a pipe";
  return "a socket or other special file";
}

}  // namespace

uint64_t checkedInputFileSize(const std::string& path, uint64_t limitBytes,
                              const std::string& what) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    IMERGE_FAIL("cannot open ", what, " ", path, ": ", std::strerror(errno));
  }
  IMERGE_CHECK(S_ISREG(info.st_mode), what, " ", path, " is not a regular file (",
               fileTypeName(info.st_mode), ")");
  const auto bytes = static_cast<uint64_t>(info.st_size);
  IMERGE_CHECK(bytes <= limitBytes, what, " ", path, " has ", bytes, " bytes, more than the ",
               limitBytes, " this reader accepts (docs/input_limits.md)");
  return bytes;
}

}  // namespace imerge
