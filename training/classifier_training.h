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
  double imagesPerSecond = 0;
  double seconds = 0;
  double dataWaitSeconds = 0;  // time the loop waited for the data loader
  int64_t images = 0;
  int64_t steps = 0;
  // Data-parallel runs: one entry per iteration (compute, communication, overlap, waiting).
  std::vector<distributed::StepBreakdown> breakdowns;
};

// One pass over `loader`'s epoch in training mode: forward, softmax cross-entropy, backward,
// SGD step with the schedule's rate at every step. Stops after `maxSteps` steps when positive.
// `onProgress` runs after every step. With `parallel`, the steps go through it (gradients
// averaged over the ranks, `loader` holding this rank's shard) and the loss, accuracy and
// images are summed over all ranks at the end of the epoch; progress shows this rank's.
EpochResult trainEpoch(layers::Module& model, optim::Sgd& optimizer,
                       const optim::LrSchedule& schedule, data::DataLoader& loader, int64_t epoch,
                       int64_t maxSteps = 0,
                       const std::function<void(const StepProgress&)>& onProgress = {},
                       distributed::DataParallel* parallel = nullptr);

// Loss and accuracy over one pass of `loader` in evaluation mode, without recording a graph.
// With `parallel`, each rank evaluates its shard and the figures are summed over the ranks.
EpochResult evaluate(layers::Module& model, data::DataLoader& loader,
                     distributed::DataParallel* parallel = nullptr);

}  // namespace imerge::training
