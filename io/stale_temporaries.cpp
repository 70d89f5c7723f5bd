#include "io/stale_temporaries.h"

#include <signal.h>

#include <cerrno>
#include <charconv>
#include <filesystem>
#include <system_error>

#include "core/error.h"

namespace imerge::io {
namespace {

namespace fs = std::filesystem;

// The pid in "<name>.ckpt.tmp-<pid>", or 0 when the name does not match the pattern exactly.
long temporaryPid(const std::string& filename) {
  const std::string marker = ".ckpt.tmp-";
  const size_t at = filename.rfind(marker);
  if (at == std::string::npos || at == 0) return 0;
  const char* digits = filename.data() + at + marker.size();
  const char* end = filename.data() + filename.size();
  long pid = 0;
  const auto [stop, error] = std::from_chars(digits, end, pid);
  if (error != std::errc() || stop != end || pid <= 0) return 0;
  return pid;
}

// kill(pid, 0) sends nothing; it fails with ESRCH only when no such process exists (EPERM
// means one exists but belongs to someone else, so its file is left alone).
bool processIsGone(long pid) {
  return ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

}  // namespace

std::vector<StaleTemporary> removeStaleCheckpointTemporaries(const std::string& directory) {
  std::vector<StaleTemporary> removed;
  std::error_code error;
  fs::directory_iterator entries(directory, error);
  if (error) return removed;  // no folder yet: nothing was ever saved there
  for (const fs::directory_entry& entry : entries) {
    const long pid = temporaryPid(entry.path().filename().string());
    if (pid == 0 || !entry.is_regular_file(error) || !processIsGone(pid)) continue;
    fs::remove(entry.path(), error);
    IMERGE_CHECK(!error, "cannot remove the stale checkpoint temporary ", entry.path().string(),
                 " (left by process ", pid, "): ", error.message());
    removed.push_back({entry.path().string(), pid});
  }
  return removed;
}

}  // namespace imerge::io
