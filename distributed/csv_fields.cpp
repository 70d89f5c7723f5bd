#include "distributed/csv_fields.h"

#include <charconv>
#include <cmath>

#include "core/error.h"

namespace imerge::distributed {

std::string trimmed(std::string_view text) {
  const auto isSpace = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!text.empty() && isSpace(text.front())) text.remove_prefix(1);
  while (!text.empty() && isSpace(text.back())) text.remove_suffix(1);
  return std::string(text);
}

std::vector<std::string> splitFields(std::string_view line) {
  std::vector<std::string> fields;
  while (true) {
    const size_t comma = line.find(',');
    fields.push_back(trimmed(line.substr(0, comma)));
    if (comma == std::string_view::npos) return fields;
    line.remove_prefix(comma + 1);
  }
}

double parseNumber(const std::string& field, const std::string& where, const std::string& column) {
  double value = 0;
  const char* end = field.data() + field.size();
  const auto [stop, status] = std::from_chars(field.data(), end, value);
  IMERGE_CHECK(!field.empty() && status == std::errc() && stop == end && std::isfinite(value),
               where, ": field '", column, "' is '", field, "', which is not a finite number");
  IMERGE_CHECK(value >= 0, where, ": field '", column, "' is ", field, ", which is negative");
  return value;
}

size_t parseWholeNumber(const std::string& field, const std::string& where,
                        const std::string& column) {
  const double value = parseNumber(field, where, column);
  IMERGE_CHECK(value == std::floor(value) && value < 9.0e15, where, ": field '", column, "' is ",
               field, ", which is not a whole number below 9e15");
  return static_cast<size_t>(value);
}

}  // namespace imerge::distributed
