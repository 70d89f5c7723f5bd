// The training and evaluation loops of an image classifier, shared by imerge-train and the
// end-to-end test so the test exercises exactly what users run.
#pragma once

#include <functional>

#include "data/data_loader.h"
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
  double dataWaitSeconds = 0;  // time the loop waited for the data loader
  int64_t images = 0;
  int64_t steps = 0;
};

// One pass over `loader`'s epoch in training mode: forward, softmax cross-entropy, backward,
// SGD step with the schedule's rate at every step. Stops after `maxSteps` steps when positive.
// `onProgress` runs after every step.
EpochResult trainEpoch(layers::Module& model, layers::Sgd& optimizer,
                       const layers::LrSchedule& schedule, data::DataLoader& loader, int64_t epoch,
                       int64_t maxSteps = 0,
                       const std::function<void(const StepProgress&)>& onProgress = {});

// Loss and accuracy over one pass of `loader` in evaluation mode, without recording a graph.
EpochResult evaluate(layers::Module& model, data::DataLoader& loader);

}  // namespace imerge::apps
