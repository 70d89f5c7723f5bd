// The MPI communicator's thread, its queue and its collectives (the design is in the header).
//
// Thread level: MPI_Init_thread is called on the communication thread, which makes that thread
// MPI's "main thread", and no other thread calls MPI (abort() aside, see the header). That is
// exactly MPI_THREAD_FUNNELED; SERIALIZED or MULTIPLE would buy nothing and MULTIPLE makes Open
// MPI lock around every call.
//
// Progress: Open MPI moves a non-blocking collective forward only inside MPI calls, so the test
// loop below is what drives the transfer. Between tests it yields while a core is free and
// sleeps briefly while every core computes (pauseBetweenTests, thread_latency.h), so it neither
// starves this rank's compute thread nor waits a scheduler tick for its core. Open MPI's own
// yield inside progress is turned off (mpi_yield_when_idle=0) for the same reason.
#include "distributed/comm/mpi_communicator.h"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <thread>
#include <vector>

#include "core/error.h"
#include "distributed/comm/collective_shape.h"
#include "distributed/comm/stall_report.h"
#include "distributed/comm/thread_latency.h"

namespace imerge::distributed {

namespace {

std::string mpiErrorString(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS)
    return "MPI error " + std::to_string(code);
  return std::string(text, static_cast<size_t>(length));
}

const char* threadLevelName(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE:
      return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED:
      return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED:
      return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE:
      return "MPI_THREAD_MULTIPLE";
    default:
      return "an unknown thread level";
  }
}

// Ranks that disagree on checkCollectiveShapes would post different sequences (the check's
// all-gather on one side only), so the setting itself is compared first, by the one collective
// every rank posts alike: {check, -check} reduced by max, which differ in sign unless all agree.
std::string agreeOnShapeChecking(bool checking, MPI_Comm comm) {
  const int64_t check = checking ? 1 : 0;
  int64_t extremes[2] = {check, -check};
  const int code = MPI_Allreduce(MPI_IN_PLACE, extremes, 2, MPI_INT64_T, MPI_MAX, comm);
  if (code != MPI_SUCCESS) return "MPI_Allreduce at start-up failed: " + mpiErrorString(code);
  if (extremes[0] == -extremes[1]) return "";
  return "the ranks disagree on MpiOptions::checkCollectiveShapes (imerge-train's "
         "--dist-check-collectives): this rank has it " +
         std::string(check ? "on" : "off") +
         ", another rank the opposite; every rank must use the same setting";
}

// The point-to-point tag of the stall check's messages (stall_report.h). Collectives never
// match point-to-point messages, so any tag would do; one of its own keeps it recognisable.
constexpr int kStallTag = 7001;

// One MpiCommunicator per process, ever: MPI_Init cannot follow MPI_Finalize.
std::atomic<bool> processHasMpiCommunicator{false};

}  // namespace

// ---- the collectives, on the communication thread ------------------------------------------

class MpiCommunicator::Ops final : public CollectiveOps {
 public:
  explicit Ops(MpiCommunicator& owner) : owner_(owner) {}

  void setComm(MPI_Comm comm) { comm_ = comm; }
  // The running task's label, for error messages; it outlives the task (the Work owns it).
  void setLabel(const std::string& label) { label_ = &label; }
  void clearLabel() { label_ = nullptr; }

  void allreduceSum(float* data, size_t count) override { sum(data, count, MPI_FLOAT); }
  void allreduceSum(double* data, size_t count) override { sum(data, count, MPI_DOUBLE); }
  void allreduceSum(int64_t* data, size_t count) override { sum(data, count, MPI_INT64_T); }
  void allreduceMax(double* data, size_t count) override { max(data, count, MPI_DOUBLE); }
  void allreduceMax(int64_t* data, size_t count) override { max(data, count, MPI_INT64_T); }
  void allreduceBitwiseAnd(uint8_t* data, size_t bytes) override {
    checked(CollectiveOperation::AllreduceBitwiseAnd, bytes, 1, 0, [&](bool abandonAtOnce) {
      allreduce(data, bytes, 1, MPI_UINT8_T, MPI_BAND, "all-reduce (bitwise and)", abandonAtOnce);
    });
  }

  void broadcast(void* data, size_t bytes, int root) override {
    IMERGE_CHECK(root >= 0 && root < owner_.size_, "broadcast '", label(), "': root ", root,
                 " is not a rank of this world of ", owner_.size_);
    checked(CollectiveOperation::Broadcast, bytes, 1, root, [&](bool abandonAtOnce) {
      forEachPiece(
          data, bytes, 1,
          [&](void* piece, int count, MPI_Request* request) {
            return MPI_Ibcast(piece, count, MPI_BYTE, root, comm_, request);
          },
          "broadcast", "MPI_Ibcast", abandonAtOnce);
    });
  }

  void allgather(const void* mine, void* all, size_t bytes) override {
    IMERGE_CHECK(bytes <= INT_MAX, "all-gather '", label(), "': ", bytes,
                 " bytes per rank is more than one MPI call carries");
    checked(CollectiveOperation::Allgather, bytes, 1, 0, [&](bool abandonAtOnce) {
      gather(mine, all, bytes, "all-gather", bytes, abandonAtOnce);
    });
  }

  void reduceScatterSum(float* data, size_t count) override {
    const BlockCounts blocks = blockCounts(count, "reduce-scatter");
    const BlockRange mine = blockOf(count, owner_.rank_, owner_.size_);
    // MPI_IN_PLACE would leave this rank's block at the start of the buffer; a separate
    // receive buffer puts it where it belongs with one copy of M / N bytes. The buffer stays
    // MPI's if the request is abandoned, and no later task reuses it (they fail at once).
    reduceScatterBlock_.resize(std::max<size_t>(mine.count, 1));
    checked(CollectiveOperation::ReduceScatterSum, count, sizeof(float), 0,
            [&](bool abandonAtOnce) {
              MPI_Request request = MPI_REQUEST_NULL;
              check(MPI_Ireduce_scatter(data, reduceScatterBlock_.data(), blocks.counts.data(),
                                        MPI_FLOAT, MPI_SUM, comm_, &request),
                    "MPI_Ireduce_scatter", "reduce-scatter", count * sizeof(float));
              completeOrAbandon(request, abandonAtOnce, "reduce-scatter", count * sizeof(float));
              if (!abandonAtOnce) {
                std::copy_n(reduceScatterBlock_.data(), mine.count, data + mine.offset);
              }
            });
  }

  void allgatherBlocks(float* data, size_t count) override {
    const BlockCounts blocks = blockCounts(count, "all-gather");
    checked(CollectiveOperation::AllgatherBlocks, count, sizeof(float), 0, [&](bool abandonAtOnce) {
      MPI_Request request = MPI_REQUEST_NULL;
      // In place: each rank's contribution is its own block of `data`.
      check(MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, data, blocks.counts.data(),
                            blocks.offsets.data(), MPI_FLOAT, comm_, &request),
            "MPI_Iallgatherv", "all-gather", count * sizeof(float));
      completeOrAbandon(request, abandonAtOnce, "all-gather", count * sizeof(float));
    });
  }

  void barrier() override {
    checked(CollectiveOperation::Barrier, 0, 0, 0, [&](bool abandonAtOnce) {
      MPI_Request request = MPI_REQUEST_NULL;
      check(MPI_Ibarrier(comm_, &request), "MPI_Ibarrier", "barrier", 0);
      completeOrAbandon(request, abandonAtOnce, "barrier", 0);
    });
  }

  // Requests given up by a time-out or by the destructor. Their buffers are still MPI's: if the
  // other ranks join late, MPI writes into them when the requests are tested to completion.
  bool hasAbandoned() const { return !abandoned_.empty(); }
  void progressAbandoned() {
    for (MPI_Request& request : abandoned_) {
      int done = 0;
      // An error here has nowhere to go; the request is then dropped like a completed one.
      if (MPI_Test(&request, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) request = MPI_REQUEST_NULL;
    }
    std::erase(abandoned_, MPI_REQUEST_NULL);
  }
  size_t abandonedCount() const { return abandoned_.size(); }

 private:
  template <typename T>
  void sum(T* data, size_t count, MPI_Datatype type) {
    checked(CollectiveOperation::AllreduceSum, count, sizeof(T), 0, [&](bool abandonAtOnce) {
      allreduce(data, count, sizeof(T), type, MPI_SUM, "all-reduce", abandonAtOnce);
    });
  }
  template <typename T>
  void max(T* data, size_t count, MPI_Datatype type) {
    checked(CollectiveOperation::AllreduceMax, count, sizeof(T), 0, [&](bool abandonAtOnce) {
      allreduce(data, count, sizeof(T), type, MPI_MAX, "all-reduce (max)", abandonAtOnce);
    });
  }

  // The blocks of reduceScatterSum and allgatherBlocks as MPI's int counts and displacements.
  struct BlockCounts {
    std::vector<int> counts, offsets;
  };
  BlockCounts blockCounts(size_t count, const char* what) const {
    BlockCounts blocks;
    for (int r = 0; r < owner_.size_; ++r) {
      const BlockRange block = blockOf(count, r, owner_.size_);
      IMERGE_CHECK(block.offset + block.count <= INT_MAX, what, " '", label(), "': ", count,
                   " floats is more than one MPI call addresses (", INT_MAX, " elements)");
      blocks.counts.push_back(static_cast<int>(block.count));
      blocks.offsets.push_back(static_cast<int>(block.offset));
    }
    return blocks;
  }

  const std::string& label() const {
    static const std::string none = "(no task)";
    return label_ ? *label_ : none;
  }

  // The shape check, then the collective itself: post(false) posts and completes it. When the
  // check is abandoned (a time-out or the destructor), the other ranks have not reached it yet;
  // the collective is then posted all the same and abandoned with the check, post(true), so
  // that ranks joining late, whose check completes and agrees, find it, and it completes as an
  // abandoned collective did before checks existed. (Of a buffer split into several MPI calls
  // only the first piece is posted so: the late ranks then time out in the second.)
  template <typename Post>
  void checked(CollectiveOperation operation, size_t count, size_t elementBytes, int root,
               Post post) {
    position_ = {position_.sequence + 1,
                 CollectiveShape::of(operation, count, elementBytes, root, label())};
    const size_t abandonedBefore = abandoned_.size();
    try {
      agreeOnShape();
    } catch (const Error&) {
      if (abandoned_.size() > abandonedBefore) post(true);
      throw;
    }
    post(false);
  }

  // Every rank's next collective, gathered before any rank posts it: ranks that disagree fail
  // together, each with the same message naming every rank's collective, and MPI never sees
  // the mismatched pair. Every collective is preceded by this same fixed-size all-gather, so a
  // disagreement is always met by two of these, which match whatever follows them.
  void agreeOnShape() {
    if (!owner_.checkCollectiveShapes_.load(std::memory_order_relaxed) || owner_.size_ == 1) {
      return;
    }
    const CollectiveShape& mine = position_.shape;
    std::vector<CollectiveShape> all(static_cast<size_t>(owner_.size_));
    // Errors and time-outs name the collective being checked, as they would without the check.
    gather(&mine, all.data(), sizeof mine, collectiveName(mine.operation),
           static_cast<size_t>(mine.count * mine.elementBytes), /*abandonAtOnce=*/false);
    const std::string disagreement = describeShapeDisagreement(all);
    if (!disagreement.empty()) IMERGE_FAIL(disagreement);
  }

  // MPI_Iallgather of `bytes` per rank into `all`; errors name it `what` of `reportedBytes`.
  void gather(const void* mine, void* all, size_t bytes, const char* what, size_t reportedBytes,
              bool abandonAtOnce) {
    MPI_Request request = MPI_REQUEST_NULL;
    check(MPI_Iallgather(mine, static_cast<int>(bytes), MPI_BYTE, all, static_cast<int>(bytes),
                         MPI_BYTE, comm_, &request),
          "MPI_Iallgather", what, reportedBytes);
    completeOrAbandon(request, abandonAtOnce, what, reportedBytes);
  }

  // complete(), or with `abandonAtOnce` the request joins the abandoned ones unwaited.
  void completeOrAbandon(MPI_Request& request, bool abandonAtOnce, const char* what, size_t bytes,
                         size_t piece = 0, size_t pieces = 1) {
    if (abandonAtOnce) {
      abandoned_.push_back(request);
    } else {
      complete(request, what, bytes, piece, pieces);
    }
  }

  void allreduce(void* data, size_t count, size_t elementBytes, MPI_Datatype type, MPI_Op op,
                 const char* what, bool abandonAtOnce) {
    forEachPiece(
        data, count, elementBytes,
        [&](void* piece, int pieceCount, MPI_Request* request) {
          return MPI_Iallreduce(MPI_IN_PLACE, piece, pieceCount, type, op, comm_, request);
        },
        what, "MPI_Iallreduce", abandonAtOnce);
  }

  // MPI counts are `int`: a buffer of more elements goes as consecutive pieces, each one its own
  // collective (every rank splits the same count the same way, so the pieces match up). With
  // `abandonAtOnce` only the first piece is posted, and abandoned unwaited (see checked()).
  template <typename Start>
  void forEachPiece(void* data, size_t count, size_t elementBytes, Start start, const char* what,
                    const char* call, bool abandonAtOnce) {
    const size_t perCall = std::clamp<size_t>(owner_.maxElementsPerCall_.load(), 1, INT_MAX);
    const size_t pieces = (count + perCall - 1) / perCall;
    auto* bytes = static_cast<char*>(data);
    for (size_t piece = 0; piece < pieces; ++piece) {
      const size_t offset = piece * perCall;
      const size_t pieceCount = std::min(perCall, count - offset);
      MPI_Request request = MPI_REQUEST_NULL;
      check(start(bytes + offset * elementBytes, static_cast<int>(pieceCount), &request), call,
            what, count * elementBytes);
      completeOrAbandon(request, abandonAtOnce, what, count * elementBytes, piece, pieces);
      if (abandonAtOnce) return;
    }
  }

  void check(int code, const char* call, const char* what, size_t bytes) {
    if (code == MPI_SUCCESS) return;
    IMERGE_FAIL(call, " failed for ", what, " '", label(), "' (", bytes, " bytes) on rank ",
                owner_.rank_, " of ", owner_.size_, ": ", mpiErrorString(code),
                ". Causes: another rank exited (check its output for an earlier error), or the "
                "ranks passed different sizes to the same collective");
  }

  // The test loop: drives the request to completion, pausing between tests, until
  // the time-out or the destructor gives up on it.
  void complete(MPI_Request& request, const char* what, size_t bytes, size_t piece, size_t pieces) {
    const double timeoutSeconds = owner_.timeoutSeconds_.load();
    const auto startedAt = CommClock::now();
    const auto deadline = timeoutSeconds > 0
                              ? startedAt + std::chrono::duration_cast<CommClock::duration>(
                                                std::chrono::duration<double>(timeoutSeconds))
                              : CommClock::time_point::max();
    // The longest stretch between two tests: milliseconds, unless this process was stopped.
    auto lastTest = startedAt;
    CommClock::duration frozen{};
    for (;;) {
      int done = 0;
      check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test", what, bytes);
      if (done) return;
      const auto now = CommClock::now();
      frozen = std::max(frozen, now - lastTest);
      lastTest = now;
      if (owner_.stopping_.load(std::memory_order_relaxed)) {
        abandoned_.push_back(request);
        IMERGE_FAIL(what, " '", label(), "' (", bytes, " bytes) on rank ", owner_.rank_, " of ",
                    owner_.size_,
                    " was abandoned: the MpiCommunicator was destroyed while it "
                    "waited (call shutdown() to finish queued work first)");
      }
      if (now >= deadline) {
        abandoned_.push_back(request);
        const std::string pieceNote = pieces > 1 ? " (piece " + std::to_string(piece + 1) + " of " +
                                                       std::to_string(pieces) + ")"
                                                 : "";
        const std::string stall =
            exchangeStallReports(timeoutSeconds, std::chrono::duration<double>(frozen).count());
        IMERGE_FAIL(what, " '", label(), "' (", bytes, " bytes)", pieceNote,
                    " did not complete within ", formatSeconds(timeoutSeconds), " s on rank ",
                    owner_.rank_, " of ", owner_.size_, ": ", stall,
                    ". Other causes of a time-out: the ranks submitted different collectives, or "
                    "the same ones in a different order (every rank must launch its all-reduces "
                    "in the same order, with the same sizes); or a rank is much slower than this "
                    "one (raise MpiOptions::timeoutSeconds, imerge-train's --dist-timeout; 0 "
                    "waits forever). This communicator now fails every later task; call abort() "
                    "to end the job");
      }
      pauseBetweenTests(CommClock::now() - startedAt);
    }
  }

  // The stall check (stall_report.h), once this rank's collective has timed out: tells every
  // other rank where this one waits, then listens for theirs for a grace period (half the
  // time-out, from 0.5 to 3 s: the ranks that reached the collective time out within about a
  // step of each other), and describes who was heard. Errors end the listening early; the
  // report then names fewer ranks as arrived, and nothing waits on a rank that is gone.
  std::string exchangeStallReports(double timeoutSeconds, double frozenSeconds) {
    const double graceSeconds = std::clamp(timeoutSeconds / 2, 0.5, 3.0);
    sentPosition_ = position_;  // MPI reads it after MPI_Isend returns, so it must stay put
    for (int r = 0; r < owner_.size_; ++r) {
      if (r == owner_.rank_) continue;
      MPI_Request request = MPI_REQUEST_NULL;
      // Freed at once: a small message is sent eagerly, and one to a rank that never listens
      // must not be waited for.
      if (MPI_Isend(&sentPosition_, sizeof sentPosition_, MPI_BYTE, r, kStallTag, comm_,
                    &request) == MPI_SUCCESS) {
        MPI_Request_free(&request);
      }
    }
    std::vector<std::optional<CollectivePosition>> heard(static_cast<size_t>(owner_.size_));
    int unheard = owner_.size_ - 1;
    const auto deadline = CommClock::now() + std::chrono::duration_cast<CommClock::duration>(
                                                 std::chrono::duration<double>(graceSeconds));
    while (unheard > 0 && CommClock::now() < deadline &&
           !owner_.stopping_.load(std::memory_order_relaxed)) {
      int arrived = 0;
      MPI_Status status;
      if (MPI_Iprobe(MPI_ANY_SOURCE, kStallTag, comm_, &arrived, &status) != MPI_SUCCESS) break;
      if (!arrived) {
        progressAbandoned();  // the timed-out collective completes if the others join now
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        continue;
      }
      CollectivePosition theirs;
      if (MPI_Recv(&theirs, sizeof theirs, MPI_BYTE, status.MPI_SOURCE, kStallTag, comm_,
                   MPI_STATUS_IGNORE) != MPI_SUCCESS) {
        break;
      }
      auto& slot = heard[static_cast<size_t>(status.MPI_SOURCE)];
      if (!slot) {
        slot = theirs;
        --unheard;
      }
    }
    return describeStall({.rank = owner_.rank_,
                          .mine = position_,
                          .heard = std::move(heard),
                          .graceSeconds = graceSeconds,
                          .frozenSeconds = frozenSeconds});
  }

  MpiCommunicator& owner_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  const std::string* label_ = nullptr;
  std::vector<MPI_Request> abandoned_;
  std::vector<float> reduceScatterBlock_;  // reduceScatterSum's receive buffer
  CollectivePosition position_;            // the collective being posted, numbered from 1
  CollectivePosition sentPosition_;        // the stall check's message, while MPI sends it
};

// ---- the communicator ----------------------------------------------------------------------

MpiCommunicator::MpiCommunicator(const MpiOptions& options)
    : timeoutSeconds_(options.timeoutSeconds),
      maxElementsPerCall_(options.maxElementsPerCall),
      checkCollectiveShapes_(options.checkCollectiveShapes) {
  IMERGE_CHECK(options.timeoutSeconds >= 0,
               "MpiOptions::timeoutSeconds must be >= 0 (0 waits "
               "forever), got ",
               options.timeoutSeconds);
  IMERGE_CHECK(options.maxElementsPerCall > 0, "MpiOptions::maxElementsPerCall must be > 0");
  IMERGE_CHECK(!processHasMpiCommunicator.exchange(true),
               "MpiCommunicator: this process already started one. MPI can be initialised only "
               "once per process (not again after MPI_Finalize), so create a single "
               "MpiCommunicator and share it");
  // Both queries may be made from any thread, before MPI_Init as well.
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  IMERGE_CHECK(!initialized && !finalized, "MpiCommunicator: MPI is already ",
               finalized ? "finalised" : "initialised",
               " in this process. The communicator's thread must own MPI_Init_thread and "
               "MPI_Finalize; remove the other MPI_Init/MPI_Finalize calls");
  // Open MPI settings, read by MPI_Init; a user's own setting wins (overwrite = 0). setenv is
  // not thread-safe, which is why this happens here, before the thread exists.
  // - No yield inside Open MPI's progress: MPI_Test would yield on every call that finds nothing
  //   to do, and a yield to a busy compute thread returns at the next tick (4 ms), which made
  //   each small all-reduce during backward cost 4 ms. pauseBetweenTests() paces the loop.
  setenv("OMPI_MCA_mpi_yield_when_idle", "0", 0);
  // - MPI_Iallreduce's algorithm. libnbc's automatic choice is a binomial tree (reduce to rank
  //   0, then broadcast) whenever there are fewer than 4 ranks or the buffer is in place, which
  //   is always the case here; it moves every byte twice in sequence and measured 38-59% of
  //   blocking MPI_Allreduce's bandwidth from 1 MiB to 256 MiB on 2 ranks. Rabenseifner's
  //   reduce-scatter + all-gather (3; libnbc falls back to a ring when a buffer has fewer
  //   elements than ranks) measured 96-103% over the same sizes (bench/allreduce_bench.cpp).
  setenv("OMPI_MCA_coll_libnbc_iallreduce_algorithm", "3", 0);

  thread_ = std::thread([this] { threadMain(); });
  std::unique_lock lock(mutex_);
  wake_.wait(lock, [this] { return initDone_; });
  if (!initError_.empty()) {
    const std::string message = initError_;
    lock.unlock();
    thread_.join();
    joined_ = true;
    throw Error(message);
  }
}

MpiCommunicator::~MpiCommunicator() {
  if (joined_ || !thread_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    acceptingTasks_ = false;
  }
  wake_.notify_all();
  thread_.join();
}

WorkHandle MpiCommunicator::submit(std::string label, CommTask task) {
  auto work = std::make_shared<Work>(std::move(label));
  IMERGE_CHECK(task, "MpiCommunicator::submit('", work->label(), "'): empty task");
  {
    std::lock_guard lock(mutex_);
    if (acceptingTasks_) {
      queue_.push_back({work, std::move(task)});
      wake_.notify_one();
      return work;
    }
  }
  work->markFinished(std::make_exception_ptr(
      Error("MpiCommunicator: task '" + work->label() +
            "' was submitted after shutdown() (or "
            "while the communicator was being destroyed); submit all work before shutdown()")));
  return work;
}

void MpiCommunicator::abort(int exitCode) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  std::fflush(nullptr);
  if (initialized && !finalized) MPI_Abort(MPI_COMM_WORLD, exitCode);
  // MPI_Abort does not return in Open MPI; this is for the cases without MPI (and for an MPI
  // that would return).
  std::_Exit(exitCode);
}

void MpiCommunicator::shutdown() {
  IMERGE_CHECK(std::this_thread::get_id() != thread_.get_id(),
               "MpiCommunicator::shutdown() was called from inside a task; it waits for the "
               "communication thread, so call it from the thread that owns the communicator");
  auto marker = std::make_shared<Work>("shutdown");
  {
    std::lock_guard lock(mutex_);
    if (!acceptingTasks_ || joined_) return;
    acceptingTasks_ = false;
    queue_.push_back({marker, CommTask{}});
  }
  wake_.notify_all();
  std::exception_ptr error;
  try {
    marker->wait();
  } catch (...) {
    error = std::current_exception();
  }
  thread_.join();
  joined_ = true;
  if (error) std::rethrow_exception(error);
}

void MpiCommunicator::setTimeoutSeconds(double seconds) {
  IMERGE_CHECK(seconds >= 0, "MpiCommunicator::setTimeoutSeconds: must be >= 0, got ", seconds);
  timeoutSeconds_ = seconds;
}

void MpiCommunicator::setCheckCollectiveShapes(bool check) {
  checkCollectiveShapes_ = check;
}

void MpiCommunicator::setMaxElementsPerCall(size_t elements) {
  IMERGE_CHECK(elements > 0, "MpiCommunicator::setMaxElementsPerCall: must be > 0");
  maxElementsPerCall_ = elements;
}

bool MpiCommunicator::failed() const {
  std::lock_guard lock(mutex_);
  return firstError_ != nullptr;
}

void MpiCommunicator::finishWithoutRunning(Pending& pending, std::exception_ptr error) {
  pending.work->markFinished(std::move(error));
}

void MpiCommunicator::runTask(Pending& pending, Ops& ops) {
  std::exception_ptr earlier;
  {
    std::lock_guard lock(mutex_);
    earlier = firstError_;
  }
  if (earlier) {
    // The first error leads: whoever waits on this task reports it, and the cause is that one.
    finishWithoutRunning(
        pending, std::make_exception_ptr(Error(
                     exceptionMessage(earlier) + " (so task '" + pending.work->label() +
                     "' was not run on rank " + std::to_string(rank_) +
                     " either: after a failed task the ranks may no longer agree on the order of "
                     "collectives)")));
    return;
  }
  pending.work->markStarted();
  ops.setLabel(pending.work->label());
  std::exception_ptr error;
  try {
    pending.task(ops);
  } catch (...) {
    error = std::current_exception();
  }
  ops.clearLabel();
  if (error) {
    std::lock_guard lock(mutex_);
    if (!firstError_) firstError_ = error;
  }
  pending.work->markFinished(error);
}

void MpiCommunicator::threadMain() {
  // A bucket must start the moment its hook launches it, even while every core computes.
  requestShortTimeSlice();
  requestPreciseSleeps();
  // ---- start-up: MPI_Init_thread on this thread (see the file comment for the level) ----
  std::string initError;
  int provided = MPI_THREAD_SINGLE;
  MPI_Comm comm = MPI_COMM_NULL;
  const int initCode = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  if (initCode != MPI_SUCCESS) {
    initError = "MPI_Init_thread failed: " + mpiErrorString(initCode) +
                ". Causes: the MPI runtime could not start (run the program under mpirun, "
                "e.g. 'mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2 ...'), "
                "or the MPI installation is broken (check 'mpirun -np 1 hostname')";
  } else if (provided < MPI_THREAD_FUNNELED) {
    initError = std::string("MPI_Init_thread: this MPI library provides only ") +
                threadLevelName(provided) +
                ", but imerge runs MPI on a communication thread and needs at least "
                "MPI_THREAD_FUNNELED. Use an MPI built with thread support (Debian's Open MPI "
                "has it)";
    MPI_Finalize();
  } else {
    // Errors come back as codes (thrown as imerge::Error naming the call), not as MPI's default
    // abort of the whole job, so a caller can report them first. A private duplicate keeps our
    // collectives apart from any the application issues on MPI_COMM_WORLD.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const int dupCode = MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    if (dupCode != MPI_SUCCESS) {
      initError = "MPI_Comm_dup(MPI_COMM_WORLD) failed: " + mpiErrorString(dupCode);
    } else {
      MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
      MPI_Comm_rank(comm, &rank_);
      MPI_Comm_size(comm, &size_);
      initError = agreeOnShapeChecking(checkCollectiveShapes_.load(), comm);
    }
  }
  {
    std::lock_guard lock(mutex_);
    initError_ = initError;
    initDone_ = true;
  }
  wake_.notify_all();
  if (!initError.empty()) return;

  // ---- the task loop ----
  Ops ops(*this);
  ops.setComm(comm);
  for (;;) {
    Pending next;
    {
      std::unique_lock lock(mutex_);
      while (queue_.empty() && !stopping_) {
        if (!ops.hasAbandoned()) {
          wake_.wait(lock);
          continue;
        }
        // Abandoned requests complete only while someone tests them; a late rank is waiting
        // for this one's data.
        wake_.wait_for(lock, std::chrono::milliseconds(2));
        lock.unlock();
        ops.progressAbandoned();
        lock.lock();
      }
      if (stopping_) {
        // The destructor: fail what is left, without MPI_Finalize.
        const auto error = std::make_exception_ptr(
            Error("MpiCommunicator was destroyed before this task ran; call shutdown() to run "
                  "queued work first"));
        for (Pending& pending : queue_) finishWithoutRunning(pending, error);
        queue_.clear();
        return;
      }
      next = std::move(queue_.front());
      queue_.pop_front();
    }
    if (next.task) {
      runTask(next, ops);
      continue;
    }

    // ---- the shutdown marker: every earlier task has run ----
    const double timeoutSeconds = timeoutSeconds_.load();
    const auto deadline = CommClock::now() + std::chrono::duration_cast<CommClock::duration>(
                                                 std::chrono::duration<double>(timeoutSeconds));
    while (ops.hasAbandoned() && !stopping_ &&
           (timeoutSeconds == 0 || CommClock::now() < deadline)) {
      ops.progressAbandoned();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (ops.hasAbandoned()) {
      next.work->markFinished(std::make_exception_ptr(
          Error("MpiCommunicator::shutdown on rank " + std::to_string(rank_) + ": " +
                std::to_string(ops.abandonedCount()) +
                " collective(s) that timed out never completed, so MPI_Finalize was skipped (it "
                "would wait for them forever). Call abort() to end the job on every rank")));
      return;
    }
    MPI_Comm_free(&comm);
    const int finalizeCode = MPI_Finalize();
    next.work->markFinished(
        finalizeCode == MPI_SUCCESS
            ? nullptr
            : std::make_exception_ptr(Error("MPI_Finalize failed on rank " + std::to_string(rank_) +
                                            ": " + mpiErrorString(finalizeCode))));
    return;
  }
}

std::unique_ptr<Communicator> startMpiCommunicator(const MpiOptions& options) {
  return std::make_unique<MpiCommunicator>(options);
}

}  // namespace imerge::distributed
