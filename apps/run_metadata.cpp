#include "apps/run_metadata.h"

#include <cmath>
#include <cstdlib>

#include "apps/flag_checks.h"
#include "core/error.h"

namespace imerge::apps {

std::string joinLines(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text += (text.empty() ? "" : "\n") + line;
  return text;
}

std::vector<std::string> splitLines(const std::string& text) {
  std::vector<std::string> lines(1);
  for (const char c : text) {
    if (c == '\n') {
      lines.emplace_back();
    } else {
      lines.back() += c;
    }
  }
  return lines;
}

RecordedRun::RecordedRun(std::string source, std::map<std::string, std::string> metadata)
    : source_(std::move(source)), metadata_(std::move(metadata)) {}

const std::string* RecordedRun::find(const char* key) const {
  const auto found = metadata_.find(key);
  return found == metadata_.end() ? nullptr : &found->second;
}

const std::string& RecordedRun::text(const char* key) const {
  const std::string* entry = find(key);
  IMERGE_CHECK(entry, source_, " does not record its ", key,
               " (it was written by an older imerge-train)");
  return *entry;
}

int64_t RecordedRun::wholeNumber(const char* key, int64_t minimum) const {
  const std::string& entry = text(key);
  const std::optional<int64_t> value = parseWholeNumber(entry);
  IMERGE_CHECK(value && *value >= minimum, source_, " holds '", entry, "' as its ", key,
               ", which is not a whole number of at least ", minimum);
  return *value;
}

double RecordedRun::number(const char* key) const {
  const std::string& entry = text(key);
  char* end = nullptr;
  const double value = std::strtod(entry.c_str(), &end);
  IMERGE_CHECK(!entry.empty() && *end == '\0' && std::isfinite(value), source_, " holds '", entry,
               "' as its ", key, ", which is not a finite number");
  return value;
}

}  // namespace imerge::apps
