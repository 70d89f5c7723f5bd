// The training and evaluation loops of an image classifier, shared by imerge-train and the
// end-to-end test so the test exercises exactly what users run.
#pragma once

#include <functional>

#include "data/data_loader.h"
#include "distributed/runtime/data_parallel.h"
#include "layers/module.h"
#include "optim/lr_schedule.h"
#include "optim/sgd.h"

namespace imerge::training {

struct StepProgress {
  int64_t epoch = 0;
  int64_t step = 0;  // within the epoch, 1-based
  int64_t stepsPerEpoch = 0;
  double loss = 0;             // mean over the epoch so far
  double accuracy = 0;         // fraction correct over the epoch so far
  double imagesPerSecond = 0;  // over the epoch so far
  float learningRate = 0;
};

struct EpochResult {
  double loss = 0;
  double accuracy = 0;
  double imagesPerSecond = 0;  // of the steps this call took
  double seconds = 0;
  double dataWaitSeconds = 0;  // time the loop waited for the data loader
  int64_t images = 0;          // the epoch's so far, with EpochStart's
  int64_t steps = 0;           // steps this call took
  double lossSum = 0;          // loss x images, summed: what a resumed epoch carries on
  int64_t correct = 0;
  // Non-zero when TrainEpochOptions::stopAfterStep stopped the epoch early: its code. The epoch
  // then stands after step EpochStart::step + steps.
  int stoppedBy = 0;
  // Data-parallel runs: one entry per iteration (compute, communication, overlap, waiting).
  std::vector<distributed::StepBreakdown> breakdowns;
};

// Where an epoch starts: at its first step, or, in a run resumed in the middle of an epoch, after
// the step it stopped at, with the figures of the steps before. The figures are summed over the
// ranks at the end of the epoch, so in a data-parallel run one rank carries them, the others
// start at zero.
struct EpochStart {
  int64_t step = 0;  // steps of the epoch already taken
  double lossSum = 0;
  int64_t correct = 0;
  int64_t images = 0;
};

struct TrainEpochOptions {
  int64_t maxSteps = 0;  // when positive, the epoch ends after this many steps
  EpochStart start;
  std::function<void(const StepProgress&)> onProgress = {};  // after every step
  // After every step: a non-zero code stops the epoch there (EpochResult::stoppedBy). Every rank
  // must stop after the same step (distributed/runtime/stop_agreement.h).
  std::function<int()> stopAfterStep = {};
  // The steps go through it (gradients averaged over the ranks, the loader holding this rank's
  // shard), and the loss, accuracy and images are summed over all ranks at the end of the
  // epoch; progress shows this rank's.
  distributed::DataParallel* parallel = nullptr;
};

// One pass over `loader`'s epoch in training mode: forward, softmax cross-entropy, backward,
// SGD step with the schedule's rate at every step.
EpochResult trainEpoch(layers::Module& model, optim::Sgd& optimizer,
                       const optim::LrSchedule& schedule, data::DataLoader& loader, int64_t epoch,
                       const TrainEpochOptions& options = {});

// Loss and accuracy over one pass of `loader` in evaluation mode, without recording a graph.
// With `parallel`, each rank evaluates its shard and the figures are summed over the ranks.
EpochResult evaluate(layers::Module& model, data::DataLoader& loader,
                     distributed::DataParallel* parallel = nullptr);

}  // namespace imerge::training
