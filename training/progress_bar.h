// Progress of a long loop for people: on a terminal, one line redrawn in place with a bar,
// the figures and the time left; elsewhere (a log file, CI), a plain line every `plainEvery`
// updates and at the end, so logs stay readable.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace imerge::training {

class ProgressBar {
 public:
  // `label` starts each line ("epoch 3/10"); `total` is the number of updates expected;
  // `startAt` of them were done before this bar began (an epoch resumed mid-way), so they count
  // toward the bar but not toward the rate the time left is estimated from.
  ProgressBar(std::string label, int64_t total, int64_t plainEvery, std::FILE* out = stdout,
              int64_t startAt = 0);

  // `done` updates so far; `figures` is the text after the bar ("loss 0.41 acc 85.2% ...").
  void update(int64_t done, const std::string& figures);
  // Ends the line on a terminal; prints the final plain line elsewhere, with the count of the
  // last update (a loop stopped early ends short of `total`).
  void finish(const std::string& figures);

  static bool isTerminal(std::FILE* out);
  // "1:05:09", "4:02", "0:07"
  static std::string formatDuration(double seconds);
  // The time left after `elapsed` seconds, at the rate of the updates this bar saw
  // (done - startAt); NaN before the first.
  static double secondsLeft(double elapsed, int64_t done, int64_t startAt, int64_t total);

 private:
  std::string line(int64_t done, const std::string& figures) const;

  std::string label_;
  int64_t total_;
  int64_t startAt_;
  int64_t lastDone_;  // of the latest update; `total` before any
  int64_t plainEvery_;
  std::FILE* out_;
  bool terminal_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point lastDraw_;
};

}  // namespace imerge::training
