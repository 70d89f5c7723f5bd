// Where the repository is, for tests that read its committed files (fixtures, reference values,
// published inputs).
#pragma once

#include <filesystem>

namespace imerge::testing {

// The repository's root (the folder holding tests/, core/, ...).
std::filesystem::path sourceTree();

// tests/reference/: PyTorch's reference values and the scripts that write them.
inline std::filesystem::path referenceDir() {
  return sourceTree() / "tests" / "reference";
}

}  // namespace imerge::testing
