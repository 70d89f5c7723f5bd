#include "support/source_tree.h"

namespace imerge::testing {

// The one object that holds the checkout's absolute path (a definition on this file alone, see
// tests/support/CMakeLists.txt): every other object then compiles the same from any clone, so
// the compiler cache that scripts/build.sh uses serves a fresh clone too.
std::filesystem::path sourceTree() {
  return IMERGE_SOURCE_TREE;
}

}  // namespace imerge::testing
