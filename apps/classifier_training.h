// The training and evaluation loops of an image classifier, shared by imerge-train and the
// end-to-end test so the test exercises exactly what users run.
#pragma once

#include <functional>

#include "data/shuffled_batches.h"
#include "layers/lr_schedule.h"
#include "layers/module.h"
#include "layers/sgd.h"

namespace imerge::apps {

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
  int64_t images = 0;
};

// One pass over `batches` in training mode: forward, softmax cross-entropy, backward, SGD
// step with the schedule's rate at every step. `onProgress` runs after every step.
EpochResult trainEpoch(layers::Module& model, layers::Sgd& optimizer,
                       const layers::LrSchedule& schedule, data::ShuffledBatches& batches,
                       Generator& generator, int64_t epoch,
                       const std::function<void(const StepProgress&)>& onProgress = {});

// Loss and accuracy in evaluation mode, without recording a graph.
EpochResult evaluate(layers::Module& model, data::ShuffledBatches& batches);

}  // namespace imerge::apps
