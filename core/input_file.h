// The check every reader makes before it allocates for a file's contents: the path names a
// regular file (not a directory, a device such as /dev/zero, or a pipe, whose sizes say
// nothing), and its size is within the reader's documented limit. The limits of each reader
// are listed in docs/input_limits.md.
#pragma once

#include <cstdint>
#include <string>

namespace imerge {

// The size in bytes of `path`, a regular file of at most `limitBytes`; otherwise throws
// imerge::Error naming the path, `what` it was read as ("communication samples CSV"), its
// type or size, and the limit.
uint64_t checkedInputFileSize(const std::string& path, uint64_t limitBytes,
                              const std::string& what);

}  // namespace imerge
