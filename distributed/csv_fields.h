// The fields of the small CSV files the distributed module reads (communication samples,
// compute profiles, published cluster tables), with one set of rules for all of them: fields
// are trimmed, numbers must be finite and non-negative, and a refusal names where the field came
// from ("FILE:LINE") and its column.
#pragma once

#include <cstddef>
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

}  // namespace imerge::distributed
