#include "distributed/thread_latency.h"

#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>

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

}  // namespace imerge::distributed
