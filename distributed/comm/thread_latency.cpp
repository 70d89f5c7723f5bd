#include "distributed/comm/thread_latency.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <thread>

namespace imerge::distributed {

namespace {
// The kernel's struct sched_attr (include/uapi/linux/sched/types.h); glibc 2.36 has no wrapper.
struct SchedAttr {
  uint32_t size;
  uint32_t sched_policy;
  uint64_t sched_flags;
  int32_t sched_nice;
  uint32_t sched_priority;
  uint64_t sched_runtime;  // for SCHED_OTHER since Linux 6.12: the requested slice, in ns
  uint64_t sched_deadline;
  uint64_t sched_period;
  uint32_t sched_util_min;
  uint32_t sched_util_max;
};
constexpr uint64_t kShortSliceNanoseconds = 100'000;
}  // namespace

bool requestShortTimeSlice() {
#ifdef SYS_sched_setattr
  SchedAttr attr{};
  attr.size = sizeof attr;
  attr.sched_policy = SCHED_OTHER;
  attr.sched_nice = 0;
  attr.sched_runtime = kShortSliceNanoseconds;
  return syscall(SYS_sched_setattr, 0, &attr, 0) == 0;
#else
  return false;
#endif
}

bool requestPreciseSleeps() {
  constexpr unsigned long kSlackNanoseconds = 1'000;
  return prctl(PR_SET_TIMERSLACK, kSlackNanoseconds) == 0;
}

bool everyCoreIsBusy() {
  static const long cores = [] {
    cpu_set_t allowed;
    return sched_getaffinity(0, sizeof allowed, &allowed) == 0 ? CPU_COUNT(&allowed)
                                                               : sysconf(_SC_NPROCESSORS_ONLN);
  }();
  // "0.52 0.58 0.59 3/467 12345": the fourth field is running/total threads.
  char text[128];
  const int fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const ssize_t length = read(fd, text, sizeof text - 1);
  close(fd);
  if (length <= 0) return false;
  text[length] = '\0';
  long running = 0;
  if (std::sscanf(text, "%*f %*f %*f %ld/", &running) != 1) return false;
  return running > cores;
}

void pauseBetweenTests(std::chrono::steady_clock::duration pending) {
  if (pending < kSpinBeforePausing) return;
  // Reading /proc/loadavg costs a few microseconds; a test loop on an idle machine asks every
  // microsecond or so, and the answer changes only as threads start or stop computing.
  thread_local auto checkedAt = std::chrono::steady_clock::time_point{};
  thread_local int busyChecks = 0;  // consecutive checks that found every core busy
  const auto now = std::chrono::steady_clock::now();
  if (now - checkedAt >= kCoreCheckInterval) {
    busyChecks = everyCoreIsBusy() ? busyChecks + 1 : 0;
    checkedAt = now;
  }
  if (busyChecks < 2) {
    std::this_thread::yield();
    return;
  }
  const auto sleep = std::clamp(
      std::chrono::duration_cast<std::chrono::microseconds>(pending) / kContendedSleepDivisor,
      kShortestContendedSleep, kLongestContendedSleep);
  std::this_thread::sleep_for(sleep);
}

}  // namespace imerge::distributed
