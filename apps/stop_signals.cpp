#include "apps/stop_signals.h"

#include <atomic>
#include <csignal>
#include <forward_list>
#include <iterator>

#include "apps/rank_exit_report.h"
#include "apps/signal_safe_write.h"

namespace imerge::apps {
namespace {

constexpr int kAskingSignals[] = {SIGINT, SIGTERM, SIGUSR1};
constexpr int kHandledSignals[] = {SIGINT, SIGTERM, SIGUSR1, SIGHUP};

// What a signal that asks prints, per signal, prepared outside the handler. Each set is built
// once and never freed, since a handler may be reading the one it replaced; all stay in
// `everyNotices`, so none is unreachable (LeakSanitizer reports the unreachable ones).
struct Notices {
  std::string asking[std::size(kAskingSignals)];
  std::string again[std::size(kAskingSignals)];  // a second one, which ends the process at once
};
std::atomic<const Notices*> notices{nullptr};
std::atomic<bool> windowOpen{false};  // a GracefulStopWindow is alive
std::atomic<int> requestedBy{0};

const Notices* prepareNotices(const std::string& who) {
  static auto* everyNotices = new std::forward_list<Notices>;  // never destroyed, as said above
  Notices* prepared = &everyNotices->emplace_front();
  const std::string from = who.empty() ? "" : " on " + who;
  for (size_t i = 0; i < std::size(kAskingSignals); ++i) {
    const int signal = kAskingSignals[i];
    prepared->again[i] = "\nimerge-train: " + signalName(signal) + " again" + from +
                         ": stopping at once, without a checkpoint of this epoch\n";
    prepared->asking[i] =
        "\nimerge-train: " + signalName(signal) + from +
        ": stopping after this training step, with a checkpoint when --checkpoint-dir is set" +
        (signal == SIGUSR1 ? std::string() : " (send it again to stop at once)") + "\n";
  }
  return prepared;
}

using NoticeSet = std::string[std::size(kAskingSignals)];

void writeNotice(const NoticeSet Notices::*which, int signal) {
  const Notices* prepared = notices.load();
  for (size_t i = 0; i < std::size(kAskingSignals); ++i) {
    if (prepared && kAskingSignals[i] == signal) {
      const std::string& text = (prepared->*which)[i];
      writeToStderrFromHandler(text.data(), text.size());
    }
  }
}

[[noreturn]] void endBySignal(int signal) {
  writeRankExitReport(signal);
  // End as the signal would have ended the process: the exit status still says which signal.
  struct sigaction fallback = {};
  fallback.sa_handler = SIG_DFL;
  sigaction(signal, &fallback, nullptr);
  raise(signal);
  _exit(128 + signal);  // not reached: the default action of these signals ends the process
}

void onSignal(int signal) {
  const bool asks = signal == SIGUSR1 || (signal != SIGHUP && windowOpen.load() &&
                                          requestedBy.load() == 0 && !anotherRankHasExited());
  if (!asks) {
    if (windowOpen.load() && requestedBy.load() != 0) writeNotice(&Notices::again, signal);
    endBySignal(signal);
  }
  int none = 0;
  if (requestedBy.compare_exchange_strong(none, signal)) writeNotice(&Notices::asking, signal);
}

}  // namespace

std::string signalName(int signal) {
  switch (signal) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGHUP:
      return "SIGHUP";
    case SIGUSR1:
      return "SIGUSR1";
    default:
      return "signal " + std::to_string(signal);
  }
}

void installStopSignals(bool graceful) {
  notices.store(prepareNotices(""));
  struct sigaction action = {};
  action.sa_handler = onSignal;
  sigemptyset(&action.sa_mask);
  // One handler at a time: a second signal waits until the first has decided.
  for (int signal : kHandledSignals) sigaddset(&action.sa_mask, signal);
  for (int signal : kHandledSignals) {
    if (signal != SIGUSR1 || graceful) sigaction(signal, &action, nullptr);
  }
}

int stopRequestedBy() {
  return requestedBy.load();
}

GracefulStopWindow::GracefulStopWindow(const std::string& who) {
  notices.store(prepareNotices(who));
  windowOpen.store(true);
}

GracefulStopWindow::~GracefulStopWindow() {
  windowOpen.store(false);
}

}  // namespace imerge::apps
