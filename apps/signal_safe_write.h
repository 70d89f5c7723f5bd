// Writing from a signal handler: write(2) in a loop, no allocation, errno kept.
#pragma once

#include <unistd.h>

#include <cerrno>
#include <cstddef>

namespace imerge::apps {

inline void writeToStderrFromHandler(const char* text, size_t length) {
  const int savedErrno = errno;
  while (length > 0) {
    const ssize_t written = write(STDERR_FILENO, text, length);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) break;
    text += written;
    length -= static_cast<size_t>(written);
  }
  errno = savedErrno;
}

}  // namespace imerge::apps
