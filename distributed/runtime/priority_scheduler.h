// PriorityScheduler: the `priority` strategy's sender (P3, ByteScheduler), run inside one task on
// the communication thread per step.
//
// Slices become ready in backward order, but the slice of the lowest layer is wanted first by
// the next forward pass, so among the ready slices the one with the lowest priority value goes
// first. Which slices are ready differs between ranks at any instant, and MPI collectives must be
// issued in the same order everywhere, so before each send the ranks agree on the set ready on
// all of them (a bitwise AND of ready masks, as Horovod's coordinator does) and send its
// highest-priority slice.
//
// Why it cannot deadlock: a rank enters a negotiation whenever it has a ready slice not yet
// sent (after an empty agreement it waits up to 200 us for a new one first, so retries are
// paced, not skipped). Every rank eventually has every slice ready, so every rank keeps
// entering until all are sent, and once all ranks hold every remaining slice the agreement is
// not empty. (Entering only on a change of the local set is not enough: a rank that already
// holds everything would never enter again while another waits for it.)
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

#include "distributed/comm/communicator.h"
#include "distributed/planning/plan.h"

namespace imerge::distributed {

class PriorityScheduler {
 public:
  // Sends bucket b with `send(ops, b)`; `priorities[b]` orders the ready buckets.
  using SendBucket = std::function<void(CollectiveOps&, size_t bucket)>;
  PriorityScheduler(std::vector<int> priorities, SendBucket send);

  // Submits this step's task; every bucket starts not ready.
  void start(Communicator& communicator, int64_t step);
  void markReady(size_t bucket);  // main thread, from the gradient hooks
  // Blocks until every bucket in `buckets` has been reduced; rethrows the task's error.
  void waitFor(const std::vector<size_t>& buckets);
  // Blocks until the step's task has finished (every bucket reduced); no-op before start().
  void waitAll();
  bool running() const { return work_ != nullptr; }
  size_t negotiationRounds() const;

 private:
  void run(CollectiveOps& ops);

  std::vector<int> priorities_;
  SendBucket send_;
  WorkHandle work_;

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<uint8_t> ready_, sent_;
  uint64_t readyVersion_ = 0;
  bool failed_ = false;
  size_t rounds_ = 0;
};

}  // namespace imerge::distributed
