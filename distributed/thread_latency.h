// Waking the communication thread without delay on a machine whose cores are all computing.
//
// Linux's EEVDF scheduler (6.6 and later) lets a running thread finish its time slice (about
// 3 ms) before a thread it woke may run, unless the woken thread asked for a shorter slice. A
// rank whose compute thread fills its core would otherwise start each bucket's all-reduce up to
// one slice late, often after backward has ended, and lose the overlap the plan is built for.
#pragma once

namespace imerge::distributed {

// Asks the scheduler for a short time slice (0.1 ms) for the calling thread, so that it runs
// as soon as it is woken. Returns false (and changes nothing) where the kernel has no such
// request (before Linux 6.12); the thread then runs as before.
bool requestShortTimeSlice();

}  // namespace imerge::distributed
