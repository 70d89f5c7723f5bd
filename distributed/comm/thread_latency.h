// Waking the communication thread without delay on a machine whose cores are all computing.
//
// Linux's EEVDF scheduler (6.6 and later) lets a running thread finish its time slice (about
// 3 ms) before a thread it woke may run, unless the woken thread asked for a shorter slice. A
// rank whose compute thread fills its core would otherwise start each bucket's all-reduce up to
// one slice late, often after backward has ended, and lose the overlap the plan is built for.
//
// Polling a pending request the same way: sched_yield() is no wake-up, so a thread that yields
// to a busy compute thread gets the core back only at the next scheduler tick (4 ms here). That
// made every small all-reduce during backward cost 4-8 ms instead of 15 us over TCP (measured
// with imerge-commbench beside two busy loops). A sleep ends in a wake-up, and a woken thread
// with a short slice preempts at once.
#pragma once

#include <chrono>

namespace imerge::distributed {

// Asks the scheduler for a short time slice (0.1 ms) for the calling thread, so that it runs
// as soon as it is woken. Returns false (and changes nothing) where the kernel has no such
// request (before Linux 6.12); the thread then runs as before.
bool requestShortTimeSlice();

// Makes the calling thread's short sleeps end on time (the default timer slack adds up to
// 50 us to each). Returns false where the kernel refuses.
bool requestPreciseSleeps();

// Between two tests of a request pending for `pending`, on the communication thread:
//   - for the first kSpinBeforePausing, nothing: a small all-reduce completes within that
//     (about 15 us over TCP here), and the thread was just woken, so it holds its core anyway;
//   - while the machine has a core to spare, a yield (the lowest latency);
//   - once two checks kCoreCheckInterval apart found every core busy, a sleep, because a yield
//     to a busy compute thread returns only at the next scheduler tick (4 ms here) while a
//     sleep ends in a wake-up. It lasts pending / kContendedSleepDivisor, within
//     [kShortestContendedSleep, kLongestContendedSleep]: a small all-reduce is tested every
//     20 us, and a long transfer, which needs few tests, wakes the core (and preempts the
//     compute thread) rarely and ends at most about 1/16 of its time late.
// Two checks, not one: a thread handing over a bucket is counted as running for a moment.
inline constexpr std::chrono::microseconds kSpinBeforePausing{30};
inline constexpr std::chrono::microseconds kCoreCheckInterval{20};
inline constexpr std::chrono::microseconds kShortestContendedSleep{20};
inline constexpr std::chrono::microseconds kLongestContendedSleep{500};
inline constexpr int kContendedSleepDivisor = 16;
void pauseBetweenTests(std::chrono::steady_clock::duration pending);

// Whether the machine now has more runnable threads than this process may use cores (the
// calling thread included), from /proc/loadavg's count of running threads. False when that
// cannot be read.
bool everyCoreIsBusy();

}  // namespace imerge::distributed
