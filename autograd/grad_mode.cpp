#include "autograd/grad_mode.h"

namespace imerge::autograd {

namespace {
thread_local bool gradEnabled = true;
}

bool GradMode::enabled() {
  return gradEnabled;
}
void GradMode::setEnabled(bool enabled) {
  gradEnabled = enabled;
}

}  // namespace imerge::autograd
