#include "training/progress_bar.h"

#include <unistd.h>

#include <cmath>

namespace imerge::training {

ProgressBar::ProgressBar(std::string label, int64_t total, int64_t plainEvery, std::FILE* out,
                         int64_t startAt)
    : label_(std::move(label)),
      total_(total),
      startAt_(startAt),
      lastDone_(total),
      plainEvery_(plainEvery > 0 ? plainEvery : 1),
      out_(out),
      terminal_(isTerminal(out)),
      start_(std::chrono::steady_clock::now()),
      lastDraw_(start_) {}

bool ProgressBar::isTerminal(std::FILE* out) {
  return ::isatty(::fileno(out)) == 1;
}

std::string ProgressBar::formatDuration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const auto total = static_cast<int64_t>(seconds + 0.5);
  const int64_t hours = total / 3600, minutes = total / 60 % 60, secs = total % 60;
  char text[32];
  if (hours > 0) {
    std::snprintf(text, sizeof text, "%lld:%02lld:%02lld", static_cast<long long>(hours),
                  static_cast<long long>(minutes), static_cast<long long>(secs));
  } else {
    std::snprintf(text, sizeof text, "%lld:%02lld", static_cast<long long>(minutes),
                  static_cast<long long>(secs));
  }
  return text;
}

double ProgressBar::secondsLeft(double elapsed, int64_t done, int64_t startAt, int64_t total) {
  const int64_t seen = done - startAt;
  if (seen <= 0) return NAN;
  return elapsed * static_cast<double>(total - done) / static_cast<double>(seen);
}

std::string ProgressBar::line(int64_t done, const std::string& figures) const {
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double fraction = total_ > 0 ? static_cast<double>(done) / static_cast<double>(total_) : 1;
  const double remaining = secondsLeft(elapsed, done, startAt_, total_);
  std::string text = label_ + " ";
  if (terminal_) {
    constexpr int kWidth = 24;
    const int filled = static_cast<int>(fraction * kWidth);
    text.append(1, '[').append(filled, '#').append(kWidth - filled, '.').append("] ");
  }
  text += std::to_string(done) + "/" + std::to_string(total_) + "  " + figures + "  ETA " +
          formatDuration(remaining);
  return text;
}

void ProgressBar::update(int64_t done, const std::string& figures) {
  lastDone_ = done;
  if (terminal_) {
    // Redrawing costs a write per call; ten times a second is smooth enough.
    const auto now = std::chrono::steady_clock::now();
    if (done < total_ && now - lastDraw_ < std::chrono::milliseconds(100)) return;
    lastDraw_ = now;
    std::fprintf(out_, "\r\033[K%s", line(done, figures).c_str());
  } else if (done % plainEvery_ == 0 && done < total_) {
    std::fprintf(out_, "%s\n", line(done, figures).c_str());
  }
  std::fflush(out_);
}

void ProgressBar::finish(const std::string& figures) {
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::string text = label_ + " " + std::to_string(lastDone_) + "/" + std::to_string(total_) +
                     "  " + figures + "  in " + formatDuration(elapsed);
  std::fprintf(out_, terminal_ ? "\r\033[K%s\n" : "%s\n", text.c_str());
  std::fflush(out_);
}

}  // namespace imerge::training
