#include "apps/classifier_training.h"

#include <algorithm>
#include <chrono>

#include "autograd/grad_mode.h"
#include "autograd/ops/loss.h"

namespace imerge::apps {

namespace {
using Clock = std::chrono::steady_clock;

int64_t countCorrect(const Tensor& logits, const Tensor& labels) {
  const int64_t rows = logits.dim(0), classes = logits.dim(1);
  const float* values = logits.data<float>();
  const int64_t* truth = labels.data<int64_t>();
  int64_t correct = 0;
  for (int64_t row = 0; row < rows; ++row) {
    const float* scores = values + row * classes;
    int64_t best = 0;
    for (int64_t c = 1; c < classes; ++c) {
      if (scores[c] > scores[best]) best = c;
    }
    correct += best == truth[row];
  }
  return correct;
}

EpochResult summarize(double lossSum, int64_t correct, int64_t images, int64_t steps,
                      double seconds, double dataWaitSeconds) {
  return {lossSum / images,
          static_cast<double>(correct) / images,
          images / seconds,
          seconds,
          dataWaitSeconds,
          images,
          steps};
}

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}
}  // namespace

EpochResult trainEpoch(layers::Module& model, layers::Sgd& optimizer,
                       const layers::LrSchedule& schedule, data::DataLoader& loader, int64_t epoch,
                       int64_t maxSteps,
                       const std::function<void(const StepProgress&)>& onProgress) {
  model.train();
  loader.startEpoch(epoch);
  int64_t stepsPerEpoch = loader.batchesPerEpoch();
  if (maxSteps > 0) stepsPerEpoch = std::min(stepsPerEpoch, maxSteps);
  const auto start = Clock::now();
  double lossSum = 0;
  int64_t correct = 0, images = 0, step = 0;
  data::Batch batch;
  while (step < stepsPerEpoch && loader.next(batch)) {
    optimizer.setLearningRate(schedule.learningRate(epoch, step, stepsPerEpoch));
    optimizer.zeroGrad();
    autograd::Variable logits = model.forward(autograd::Variable(batch.images));
    autograd::Variable loss = autograd::softmaxCrossEntropy(logits, batch.labels);
    loss.backward();
    optimizer.step();

    const int64_t count = batch.labels.numel();
    lossSum += static_cast<double>(loss.tensor().item()) * count;
    correct += countCorrect(logits.tensor(), batch.labels);
    images += count;
    ++step;
    if (onProgress) {
      const double seconds = secondsSince(start);
      onProgress({epoch, step, stepsPerEpoch, lossSum / images,
                  static_cast<double>(correct) / images, images / seconds,
                  optimizer.learningRate()});
    }
  }
  return summarize(lossSum, correct, images, step, secondsSince(start), loader.waitSeconds());
}

EpochResult evaluate(layers::Module& model, data::DataLoader& loader) {
  model.eval();
  autograd::NoGradGuard noGrad;
  const auto start = Clock::now();
  loader.startEpoch(0);
  double lossSum = 0;
  int64_t correct = 0, images = 0, steps = 0;
  data::Batch batch;
  while (loader.next(batch)) {
    autograd::Variable logits = model.forward(autograd::Variable(batch.images));
    const int64_t count = batch.labels.numel();
    lossSum += autograd::softmaxCrossEntropy(logits, batch.labels).tensor().item() * count;
    correct += countCorrect(logits.tensor(), batch.labels);
    images += count;
    ++steps;
  }
  return summarize(lossSum, correct, images, steps, secondsSince(start), loader.waitSeconds());
}

}  // namespace imerge::apps
