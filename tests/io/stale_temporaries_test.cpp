// Stale checkpoint temporaries: only `<name>.ckpt.tmp-<pid>` files of processes that are gone
// are removed; everything else in the folder, a live process's temporary included, stays.
#include "io/stale_temporaries.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "support/temp_dir.h"

namespace imerge::io {
namespace {

namespace fs = std::filesystem;

// The id of a process that has run and been reaped, so no process has it (until the kernel
// wraps around its pid space, which takes millions of new processes).
long pidOfAFinishedProcess() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  return child;
}

void touch(const fs::path& path) {
  std::ofstream(path) << "partial checkpoint";
}

std::set<std::string> filenames(const fs::path& directory) {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(directory)) {
    names.insert(entry.path().filename().string());
  }
  return names;
}

TEST(StaleCheckpointTemporaries, OnlyThoseOfFinishedProcessesAreRemoved) {
  testing::TempDir dir("stale-temporaries");
  const std::string gone = std::to_string(pidOfAFinishedProcess());
  const std::string alive = std::to_string(::getpid());
  touch(dir.path() / ("last.ckpt.tmp-" + gone));   // a SIGKILLed save: removed
  touch(dir.path() / ("best.ckpt.tmp-" + gone));   // any checkpoint name: removed
  touch(dir.path() / ("last.ckpt.tmp-" + alive));  // a save still running: kept
  touch(dir.path() / "last.ckpt");                 // the checkpoint itself: kept
  touch(dir.path() / ("notes.txt.tmp-" + gone));   // not a checkpoint's temporary: kept
  touch(dir.path() / ("last.ckpt.tmp-" + gone + "x"));
  touch(dir.path() / "last.ckpt.tmp-");
  touch(dir.path() / "last.ckpt.tmp--5");
  fs::create_directory(dir.path() / ("old.ckpt.tmp-" + gone));  // not a regular file: kept

  const std::vector<StaleTemporary> removed = removeStaleCheckpointTemporaries(dir.path().string());

  std::set<std::string> removedNames;
  for (const StaleTemporary& temporary : removed) {
    EXPECT_EQ(std::to_string(temporary.pid), gone) << temporary.path;
    removedNames.insert(fs::path(temporary.path).filename().string());
  }
  EXPECT_EQ(removedNames,
            (std::set<std::string>{"last.ckpt.tmp-" + gone, "best.ckpt.tmp-" + gone}));
  EXPECT_EQ(filenames(dir.path()),
            (std::set<std::string>{"last.ckpt.tmp-" + alive, "last.ckpt", "notes.txt.tmp-" + gone,
                                   "last.ckpt.tmp-" + gone + "x", "last.ckpt.tmp-",
                                   "last.ckpt.tmp--5", "old.ckpt.tmp-" + gone}));
}

TEST(StaleCheckpointTemporaries, AFolderThatDoesNotExistHoldsNone) {
  EXPECT_TRUE(removeStaleCheckpointTemporaries("/no/such/folder").empty());
}

}  // namespace
}  // namespace imerge::io
