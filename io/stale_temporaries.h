// Temporaries that a killed save left behind. saveCheckpoint writes `<name>.ckpt.tmp-<pid>` and
// renames it over `<name>.ckpt`; a SIGKILL (or power loss) between the two leaves the
// temporary, which no later run would ever touch. A run that is about to write checkpoints into
// a folder removes those first, and only those: the name must match the pattern exactly and
// the process that wrote it must be gone (a live one may still be saving).
#pragma once

#include <string>
#include <vector>

namespace imerge::io {

// One temporary taken away: its path and the process id its name carries.
struct StaleTemporary {
  std::string path;
  long pid = 0;
};

// Removes every regular file `<name>.ckpt.tmp-<pid>` directly in `directory` whose process no
// longer runs on this machine, and returns them. A missing directory holds none. A file that
// cannot be removed is an imerge::Error naming it.
std::vector<StaleTemporary> removeStaleCheckpointTemporaries(const std::string& directory);

}  // namespace imerge::io
