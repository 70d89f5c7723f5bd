// Checking the text of the imerge::Error an operation throws: errorMessage runs a callable and
// returns the message it threw, expectContains checks that a text holds a given part. Both
// report failures at the line of the test that called them.
#pragma once

#include <gtest/gtest.h>

#include <source_location>
#include <string>
#include <string_view>

#include "core/error.h"

namespace imerge::testing {

// The message of the imerge::Error that `body` throws; a test failure if it throws none.
template <typename Body>
std::string errorMessage(Body&& body,
                         const std::source_location& where = std::source_location::current()) {
  try {
    body();
  } catch (const Error& error) {
    return error.what();
  }
  ADD_FAILURE_AT(where.file_name(), static_cast<int>(where.line())) << "expected an imerge::Error";
  return "";
}

// A non-fatal failure, showing both texts, when `part` is not in `text`.
inline void expectContains(std::string_view text, std::string_view part,
                           const std::source_location& where = std::source_location::current()) {
  if (text.find(part) == std::string_view::npos) {
    ADD_FAILURE_AT(where.file_name(), static_cast<int>(where.line()))
        << "'" << part << "' is not in: " << text;
  }
}

}  // namespace imerge::testing
