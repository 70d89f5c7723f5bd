#include "apps/flag_checks.h"

#include <sched.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <map>
#include <sstream>
#include <vector>

namespace imerge::apps {

namespace {
// Whole numbers print without a decimal point ("0", not "0.000000").
std::string numberText(double value) {
  std::ostringstream text;
  text.precision(15);
  text << value;
  return text.str();
}

std::string rangeWords(double low, double high) {
  if (std::isinf(high)) return "give a number of at least " + numberText(low);
  return "give a number from " + numberText(low) + " to " + numberText(high);
}

// Whether `input` is a whole number out of int64's range (from_chars tells it from "not a number").
bool outOfInt64Range(const std::string& input) {
  int64_t value = 0;
  const char* end = input.data() + input.size();
  const auto [stop, error] = std::from_chars(input.data(), end, value);
  return error == std::errc::result_out_of_range && stop == end;
}

// Reads `input` as a finite number into `value`; returns the error to print, or "" when it is one.
std::string readFiniteNumber(const std::string& input, const std::string& range, double& value) {
  char* stop = nullptr;
  value = std::strtod(input.c_str(), &stop);
  if (input.empty() || *stop != '\0') return "'" + input + "' is not a number: " + range;
  if (!std::isfinite(value)) return input + " is not a finite number: " + range;
  return "";
}
}  // namespace

std::optional<int64_t> parseWholeNumber(const std::string& text) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || stop != end) return std::nullopt;
  return value;
}

CLI::Validator wholeNumber(int64_t low, int64_t high) {
  const std::string range =
      "give a whole number from " + std::to_string(low) + " to " + std::to_string(high);
  return CLI::Validator(
      [low, high, range](std::string& input) -> std::string {
        const std::optional<int64_t> value = parseWholeNumber(input);
        if (!value && !outOfInt64Range(input)) {
          return "'" + input + "' is not a whole number: " + range;
        }
        if (!value || *value < low || *value > high) return input + " is out of range: " + range;
        return "";
      },
      "INT in " + std::to_string(low) + ".." + std::to_string(high));
}

CLI::Validator finiteNumber(double low, double high) {
  const std::string range = rangeWords(low, high);
  return CLI::Validator(
      [low, high, range](std::string& input) -> std::string {
        double value = 0;
        if (std::string error = readFiniteNumber(input, range, value); !error.empty()) return error;
        if (value < low || value > high) return input + " is out of range: " + range;
        return "";
      },
      std::isinf(high) ? "NUMBER >= " + numberText(low)
                       : "NUMBER in " + numberText(low) + ".." + numberText(high));
}

CLI::Validator positiveNumber() {
  const std::string range = "give a number above 0";
  return CLI::Validator(
      [range](std::string& input) -> std::string {
        double value = 0;
        if (std::string error = readFiniteNumber(input, range, value); !error.empty()) return error;
        if (value <= 0) return input + " is out of range: " + range;
        return "";
      },
      "NUMBER > 0");
}

int availableCores() {
  cpu_set_t cores;
  CPU_ZERO(&cores);
  if (sched_getaffinity(0, sizeof cores, &cores) == 0) return CPU_COUNT(&cores);
  return 1;
}

CLI::Validator threadCount() {
  return CLI::Validator(
      [](std::string& input) -> std::string {
        const int cores = availableCores();
        const std::string range =
            "give 0 (all cores) or a whole number from 1 to " + std::to_string(cores);
        const std::optional<int64_t> value = parseWholeNumber(input);
        if (!value && !outOfInt64Range(input)) {
          return "'" + input + "' is not a whole number: " + range;
        }
        if (value && *value < 0) return input + " is out of range: " + range;
        if (!value || *value > cores) {
          return input + " is more than the " + std::to_string(cores) +
                 " cores this process may use: " + range;
        }
        return "";
      },
      "INT in 0..cores");
}

void refuseRepeatedOptions(const CLI::App& app, int argc, const char* const* argv) {
  std::map<std::string, std::vector<std::string>> given;  // option name -> values, in order
  std::vector<std::string> order;
  for (int i = 1; i < argc; ++i) {
    const std::string token = argv[i];
    if (token == "--") break;  // what follows is positional
    if (token.rfind("--", 0) != 0) continue;
    const size_t equals = token.find('=');
    const std::string name = token.substr(0, equals);
    const CLI::Option* option = app.get_option_no_throw(name);
    // Only options that take exactly one value; flags and lists may repeat.
    if (!option || option->get_type_size() <= 0 || option->get_items_expected_max() != 1) continue;
    std::string value = equals != std::string::npos ? token.substr(equals + 1)
                        : i + 1 < argc              ? argv[i + 1]
                                                    : "";
    if (given[name].empty()) order.push_back(name);
    given[name].push_back(value);
  }
  for (const std::string& name : order) {
    const std::vector<std::string>& values = given[name];
    if (values.size() < 2) continue;
    std::string list;
    for (const std::string& value : values) list += (list.empty() ? "" : ", ") + value;
    throw CLI::ArgumentMismatch(name + " is given " + std::to_string(values.size()) + " times (" +
                                list + "): give it once");
  }
}

}  // namespace imerge::apps
