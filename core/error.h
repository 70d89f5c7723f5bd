// Errors: every failure the user can cause throws imerge::Error with a message that names the
// tensor, shape, file or flag at fault. IMERGE_CHECK adds where in the code it was raised.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace imerge {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {
template <typename... Parts>
std::string concat(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}
[[noreturn]] void throwError(const char* file, int line, const std::string& message);
}  // namespace detail

}  // namespace imerge

// IMERGE_CHECK(cond, "Conv2d: input ", x.describe(), " must have 4 dimensions");
#define IMERGE_CHECK(cond, ...)                                                                \
  do {                                                                                         \
    if (!(cond)) {                                                                             \
      ::imerge::detail::throwError(__FILE__, __LINE__, ::imerge::detail::concat(__VA_ARGS__)); \
    }                                                                                          \
  } while (0)

#define IMERGE_FAIL(...) \
  ::imerge::detail::throwError(__FILE__, __LINE__, ::imerge::detail::concat(__VA_ARGS__))
