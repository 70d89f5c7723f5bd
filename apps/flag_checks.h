// Command-line checks whose errors read as plain words: the flag, the value given and the
// values accepted, before the program reads any data. CLI11's own checks fall short of that:
// PositiveNumber writes its upper bound (1.8e308) out as a 300-digit number, NonNegativeNumber
// lets "nan" through (nan < 0 is false), and a flag given twice is "At Most 1 required but
// received 2". Shared by imerge-train, imerge-scale and imerge-commbench.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

namespace imerge::apps {

// `text` as a whole number, all of it (no sign, space or suffix beyond the digits and a leading
// '-'); nothing when it is not one or does not fit. For flags and for the numbers a checkpoint
// records.
std::optional<int64_t> parseWholeNumber(const std::string& text);

// A count no sensible run exceeds, and small enough for every integer flag's type (int).
constexpr int64_t kCountLimit = 1'000'000'000;

// A whole number from `low` to `high`: "--batch-size: 0 is out of range: give a whole number
// from 1 to 1000000000".
CLI::Validator wholeNumber(int64_t low, int64_t high = kCountLimit);

// A finite number from `low` to `high` (inclusive); no upper bound when high is infinity:
// "--lr: nan is not a finite number: give a number of at least 0".
CLI::Validator finiteNumber(double low, double high = std::numeric_limits<double>::infinity());

// A finite number above zero: "--bandwidth-scale: 0 is out of range: give a number above 0".
CLI::Validator positiveNumber();

// --threads: 0 (all cores) up to the cores this process may run on (its CPU affinity), so that
// asking for 1000 on a 2-core machine is refused rather than silently oversubscribed.
CLI::Validator threadCount();
int availableCores();

// Throws CLI::ArgumentMismatch when an option that takes one value is given more than once in
// argv: "--epochs is given 2 times (1, 2): give it once". Call before app.parse, in the same
// try block, so that app.exit prints it as CLI11's own errors.
void refuseRepeatedOptions(const CLI::App& app, int argc, const char* const* argv);

// CLI11_PARSE with refuseRepeatedOptions first: returns from the caller (main) on an error.
#define IMERGE_PARSE_FLAGS(app, argc, argv)                   \
  do {                                                        \
    try {                                                     \
      ::imerge::apps::refuseRepeatedOptions(app, argc, argv); \
      (app).parse(argc, argv);                                \
    } catch (const CLI::ParseError& error) {                  \
      return (app).exit(error);                               \
    }                                                         \
  } while (false)

}  // namespace imerge::apps
