#include "core/error.h"

#include <cstring>

namespace imerge::detail {

void throwError(const char* file, int line, const std::string& message) {
  // Keep the path short: "core/tensor.cpp:42", not the build machine's absolute path.
  const char* shortFile = file;
  for (const char* root : {"/core/", "/autograd/", "/layers/", "/data/", "/apps/", "/models/",
                           "/distributed/", "/tests/"}) {
    if (const char* found = std::strstr(file, root)) {
      shortFile = found + 1;
      break;
    }
  }
  throw Error(message + " [" + shortFile + ":" + std::to_string(line) + "]");
}

}  // namespace imerge::detail
