#include "distributed/runtime/priority_scheduler.h"

#include <utility>

#include "core/error.h"

namespace imerge::distributed {

namespace {
constexpr auto kEmptyRoundPause = std::chrono::microseconds(200);
}  // namespace

PriorityScheduler::PriorityScheduler(std::vector<int> priorities, SendBucket send)
    : priorities_(std::move(priorities)), send_(std::move(send)) {}

void PriorityScheduler::start(Communicator& communicator, int64_t step) {
  IMERGE_CHECK(work_ == nullptr, "PriorityScheduler: step ", step,
               " started before the previous step's slices were all reduced");
  {
    std::lock_guard lock(mutex_);
    ready_.assign(priorities_.size(), 0);
    sent_.assign(priorities_.size(), 0);
    readyVersion_ = 0;
    failed_ = false;
  }
  work_ = communicator.submit("priority step " + std::to_string(step),
                              [this](CollectiveOps& ops) { run(ops); });
}

void PriorityScheduler::markReady(size_t bucket) {
  {
    std::lock_guard lock(mutex_);
    ready_[bucket] = 1;
    ++readyVersion_;
  }
  changed_.notify_all();
}

void PriorityScheduler::run(CollectiveOps& ops) {
  const size_t buckets = priorities_.size();
  // One bit per bucket: ready here and not yet sent.
  std::vector<uint8_t> mask((buckets + 7) / 8);
  size_t sentCount = 0;
  uint64_t enteredVersion = 0;
  bool lastRoundSent = true;
  try {
    while (sentCount < buckets) {
      {
        std::unique_lock lock(mutex_);
        auto offersSomething = [&] {
          for (size_t b = 0; b < buckets; ++b) {
            if (ready_[b] && !sent_[b]) return true;
          }
          return false;
        };
        changed_.wait(lock, offersSomething);
        if (!lastRoundSent && readyVersion_ == enteredVersion) {
          // The last agreement was empty and nothing is new here: another rank lacks what this
          // one offers. Pace the retries instead of spinning on the shared cores.
          changed_.wait_for(lock, kEmptyRoundPause,
                            [&] { return readyVersion_ != enteredVersion; });
        }
        enteredVersion = readyVersion_;
        std::fill(mask.begin(), mask.end(), 0);
        for (size_t b = 0; b < buckets; ++b) {
          if (ready_[b] && !sent_[b]) mask[b / 8] |= uint8_t(1u << (b % 8));
        }
        ++rounds_;
      }
      ops.allreduceBitwiseAnd(mask.data(), mask.size());
      size_t chosen = buckets;
      for (size_t b = 0; b < buckets; ++b) {
        if ((mask[b / 8] >> (b % 8) & 1) &&
            (chosen == buckets || priorities_[b] < priorities_[chosen]))
          chosen = b;
      }
      lastRoundSent = chosen != buckets;
      if (!lastRoundSent) continue;
      send_(ops, chosen);
      {
        std::lock_guard lock(mutex_);
        sent_[chosen] = 1;
      }
      changed_.notify_all();
      ++sentCount;
    }
  } catch (...) {
    {
      std::lock_guard lock(mutex_);
      failed_ = true;
    }
    changed_.notify_all();
    throw;
  }
}

void PriorityScheduler::waitFor(const std::vector<size_t>& buckets) {
  if (!work_) return;
  {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] {
      if (failed_) return true;
      for (size_t b : buckets) {
        if (!sent_[b]) return false;
      }
      return true;
    });
    if (!failed_) return;
  }
  waitAll();  // rethrows the task's error
}

void PriorityScheduler::waitAll() {
  if (!work_) return;
  WorkHandle work = std::move(work_);
  work_ = nullptr;
  work->wait();
}

size_t PriorityScheduler::negotiationRounds() const {
  std::lock_guard lock(mutex_);
  return rounds_;
}

}  // namespace imerge::distributed
