#include "distributed/planning/csv_fields.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "core/error.h"
#include "core/input_file.h"

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

namespace {
std::string joined(const std::vector<std::string>& names) {
  std::string list;
  for (const std::string& name : names) {
    if (!list.empty()) list += ", ";
    list += name;
  }
  return list;
}
}  // namespace

std::ifstream openTableFile(const std::string& path, const std::string& what) {
  std::ifstream file(path);
  IMERGE_CHECK(file.is_open(), path, ": cannot open the ", what);
  checkedInputFileSize(path, kMaxTableBytes, what);
  return file;
}

CsvTable::CsvTable(std::istream& text, std::string source, const std::vector<std::string>& required,
                   const std::string& rowNoun)
    : source_(std::move(source)) {
  std::string line;
  for (size_t lineNumber = 1; std::getline(text, line); ++lineNumber) {
    const std::string content = trimmed(line);
    if (content.empty()) continue;
    if (content.front() == '#') {
      if (columns_.empty()) leadingComments_.push_back({lineNumber, trimmed(content.substr(1))});
      continue;
    }
    std::vector<std::string> fields = splitFields(content);
    if (columns_.empty()) {
      for (const std::string& name : fields) {
        IMERGE_CHECK(!has(name), where(lineNumber), ": the header names column '", name, "' twice");
        columns_.push_back(name);
      }
      for (const std::string& name : required) {
        IMERGE_CHECK(has(name), where(lineNumber), ": the header has no '", name,
                     "' column (it has: ", joined(columns_), "); this table needs ",
                     joined(required));
      }
      continue;
    }
    IMERGE_CHECK(fields.size() == columns_.size(), where(lineNumber), ": ", fields.size(),
                 " fields, but the header has ", columns_.size(), " columns");
    rows_.push_back({lineNumber, std::move(fields)});
  }
  IMERGE_CHECK(!text.bad(), source_, ": reading failed");
  IMERGE_CHECK(!columns_.empty(), source_, ": no header line; this table needs the columns ",
               joined(required));
  IMERGE_CHECK(!rows_.empty(), source_, ": no ", rowNoun, " below the header");
}

std::string CsvTable::where(size_t line) const {
  return detail::concat(source_, ":", line);
}

bool CsvTable::has(const std::string& column) const {
  return std::find(columns_.begin(), columns_.end(), column) != columns_.end();
}

size_t CsvTable::indexOf(const std::string& column) const {
  return static_cast<size_t>(std::find(columns_.begin(), columns_.end(), column) -
                             columns_.begin());
}

const std::string& CsvTable::text(const Row& row, const std::string& column) const {
  return row.fields[indexOf(column)];
}

double CsvTable::number(const Row& row, const std::string& column) const {
  return parseNumber(text(row, column), where(row.line), column);
}

int64_t CsvTable::wholeNumber(const Row& row, const std::string& column, int64_t least) const {
  const double value = number(row, column);
  IMERGE_CHECK(value == std::floor(value) && value < 1e15, where(row.line), ": field '", column,
               "' is ", text(row, column), ", which is not a whole number");
  IMERGE_CHECK(value >= static_cast<double>(least), where(row.line), ": field '", column, "' is ",
               text(row, column), "; it must be at least ", least);
  return static_cast<int64_t>(value);
}

}  // namespace imerge::distributed
