// No-grad mode: inside a NoGradGuard, ops record no graph (evaluation, optimizer updates).
#pragma once

namespace imerge::autograd {

class GradMode {
 public:
  static bool enabled();
  static void setEnabled(bool enabled);
};

class NoGradGuard {
 public:
  NoGradGuard() : previous_(GradMode::enabled()) { GradMode::setEnabled(false); }
  ~NoGradGuard() { GradMode::setEnabled(previous_); }
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};

}  // namespace imerge::autograd
