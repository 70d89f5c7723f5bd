#include "distributed/runtime/stop_agreement.h"

namespace imerge::distributed {

StopAgreement::StopAgreement(Communicator* ranks, std::function<int()> asked)
    : ranks_(ranks && ranks->size() > 1 ? ranks : nullptr), asked_(std::move(asked)) {}

int StopAgreement::afterStep() {
  if (!ranks_) return asked_();
  if (pending_) {
    pending_->wait();
    pending_.reset();
    if (*inFlight_ > 0) return static_cast<int>(*inFlight_);
  }
  inFlight_ = std::make_shared<int64_t>(asked_());
  pending_ = ranks_->submit("stop agreement", [buffer = inFlight_](CollectiveOps& ops) {
    ops.allreduceMax(buffer.get(), 1);
  });
  return 0;
}

}  // namespace imerge::distributed
