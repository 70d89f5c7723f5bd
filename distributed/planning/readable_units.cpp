// Three significant digits everywhere: enough to tell models and plans apart in a log line,
// short enough to read. Trailing zeros are kept for seconds and bandwidths ("5.30 GB/s") so
// that columns of fitted values line up, and dropped for sizes ("8 KiB", not "8.00 KiB").
#include "distributed/planning/readable_units.h"

#include <cmath>
#include <cstdio>
#include <iterator>

namespace imerge::distributed {
namespace {

// `value` (>= 0) with three significant digits (callers keep it below 1000 in its unit).
std::string threeDigits(double value, bool keepTrailingZeros) {
  char text[64];
  const int decimals = value >= 100 ? 0 : value >= 10 ? 1 : 2;
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  std::string result = text;
  if (!keepTrailingZeros && result.find('.') != std::string::npos) {
    while (result.back() == '0') result.pop_back();
    if (result.back() == '.') result.pop_back();
  }
  return result;
}

}  // namespace

std::string readableBytes(size_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  // Move up a unit when the value would print as 1024 (or 1000 for rates) in this one.
  while (value >= 1023.5 && unit + 1 < std::size(kUnits)) {
    value /= 1024;
    ++unit;
  }
  return threeDigits(value, false) + " " + kUnits[unit];
}

std::string readableSeconds(double seconds) {
  if (!std::isfinite(seconds)) return std::to_string(seconds) + " s";
  const double magnitude = std::fabs(seconds);
  if (magnitude == 0) return "0 s";
  std::string text = seconds < 0 ? "-" : "";
  // 0.9996 us prints as "1.00 us", not "1000 ns".
  if (magnitude < 0.9995e-6) {
    text += threeDigits(magnitude * 1e9, true) + " ns";
  } else if (magnitude < 0.9995e-3) {
    text += threeDigits(magnitude * 1e6, true) + " us";
  } else if (magnitude < 0.9995) {
    text += threeDigits(magnitude * 1e3, true) + " ms";
  } else {
    text += threeDigits(magnitude, true) + " s";
  }
  return text;
}

std::string readableBandwidth(double bytesPerSecond) {
  if (!std::isfinite(bytesPerSecond)) return "unlimited bandwidth";
  static constexpr const char* kUnits[] = {"B/s", "KB/s", "MB/s", "GB/s", "TB/s"};
  double value = bytesPerSecond;
  size_t unit = 0;
  while (value >= 999.5 && unit + 1 < std::size(kUnits)) {
    value /= 1000;
    ++unit;
  }
  return threeDigits(value, true) + " " + kUnits[unit];
}

}  // namespace imerge::distributed
