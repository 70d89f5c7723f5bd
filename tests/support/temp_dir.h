// A fresh directory under the system's temporary folder, removed with everything in it by the
// destructor; the name carries the process id so parallel test processes never share one.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

namespace imerge::testing {

class TempDir {
 public:
  explicit TempDir(const std::string& name)
      : path_(std::filesystem::temp_directory_path() /
              ("imerge-" + name + "-" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace imerge::testing
