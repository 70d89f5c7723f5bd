// Whether a training loop stops after the step it has just taken, decided alike on every rank.
//
// A stop is asked on one rank (a signal there), but every rank must stop after the same step:
// one that went on would wait in a collective the stopped ones never post. After each step every
// rank submits an all-reduce (maximum) of what it was asked to the communication thread,
// behind the step's own collectives, and does not wait for it; the next step reads it. So a
// request asked during step s stops every rank after step s + 1 (after step s without other
// ranks), and the agreement never holds the loop up: 8 bytes on a thread that is idle by then
// (bench/stop_agreement_cost.sh measures it).
#pragma once

#include <functional>
#include <memory>

#include "distributed/comm/communicator.h"

namespace imerge::distributed {

class StopAgreement {
 public:
  // `asked` is what this rank was asked: 0 for nothing, otherwise a reason code (imerge-train
  // gives the signal's number). `ranks` is null, or the job's communicator.
  StopAgreement(Communicator* ranks, std::function<int()> asked);

  // Called by every rank after every step: the largest code any rank was asked by the previous
  // step (this one's, alone), or 0 to go on.
  int afterStep();

 private:
  Communicator* ranks_;
  std::function<int()> asked_;
  // The all-reduce in flight and its buffer, shared with the task so that it outlives this object
  // if the job ends with the task still queued.
  std::shared_ptr<int64_t> inFlight_;
  WorkHandle pending_;
};

}  // namespace imerge::distributed
