// The fields of the small CSV files the distributed module reads (communication samples,
// compute profiles, published cluster tables), with one set of rules for all of them: fields
// are trimmed, numbers must be finite and non-negative, and a refusal names where the field came
// from ("FILE:LINE") and its column.
#pragma once

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

namespace imerge::distributed {

// `text` without leading and trailing blanks (space, tab, CR, LF).
std::string trimmed(std::string_view text);
// The comma-separated fields of `line`, each trimmed; a trailing comma gives an empty field.
std::vector<std::string> splitFields(std::string_view line);
// The finite, non-negative number in `field`; an imerge::Error naming `where` and `column`.
double parseNumber(const std::string& field, const std::string& where, const std::string& column);
// The same, and a whole number below 9e15.
size_t parseWholeNumber(const std::string& field, const std::string& where,
                        const std::string& column);

// The largest table file (CSV, or a compute profile's JSON) the readers accept: the ones here
// are kilobytes, and a table is parsed in memory.
inline constexpr uint64_t kMaxTableBytes = uint64_t{64} << 20;

// `path` opened for reading as a table: "PATH: cannot open the WHAT" when it cannot be, and a
// refusal naming it when it is not a regular file or is larger than kMaxTableBytes (a device
// such as /dev/zero would otherwise be read as one endless line).
std::ifstream openTableFile(const std::string& path, const std::string& what);

// A small CSV table: a header of named columns, then rows that remember their line. Blank lines
// and lines starting with '#' are skipped; the '#' lines above the header are kept, for tables
// that carry metadata there (compute profiles: "# model: resnet18").
class CsvTable {
 public:
  struct Row {
    size_t line = 0;
    std::vector<std::string> fields;
  };
  struct Comment {
    size_t line = 0;
    std::string text;  // after the '#', trimmed
  };

  // Reads the header and the rows; refuses a header without one of `required` (listing what it
  // has), a repeated column, a row with the wrong number of fields, a table without rows.
  // `source` names the file in messages; `rowNoun` names its rows ("no samples below the
  // header").
  CsvTable(std::istream& text, std::string source, const std::vector<std::string>& required,
           const std::string& rowNoun = "rows");

  const std::vector<Row>& rows() const { return rows_; }
  const std::vector<Comment>& leadingComments() const { return leadingComments_; }
  std::string where(size_t line) const;
  const std::string& source() const { return source_; }
  bool has(const std::string& column) const;

  const std::string& text(const Row& row, const std::string& column) const;
  // A finite, non-negative number (parseNumber's rules).
  double number(const Row& row, const std::string& column) const;
  // A whole number of at least `least`.
  int64_t wholeNumber(const Row& row, const std::string& column, int64_t least) const;

 private:
  size_t indexOf(const std::string& column) const;

  std::string source_;
  std::vector<std::string> columns_;
  std::vector<Row> rows_;
  std::vector<Comment> leadingComments_;
};

}  // namespace imerge::distributed
