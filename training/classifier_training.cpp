#include "training/classifier_training.h"

#include <algorithm>
#include <chrono>

#include "autograd/grad_mode.h"
#include "autograd/ops/loss.h"

namespace imerge::training {

namespace {
using Clock = std::chrono::steady_clock;

// logits on any device, labels on the host.
int64_t countCorrect(const Tensor& logits, const Tensor& labels) {
  const Tensor hostLogits = logits.to(cpuDevice());
  const int64_t rows = hostLogits.dim(0), classes = hostLogits.dim(1);
  const float* values = hostLogits.data<float>();
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

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// An epoch's figures, on one rank or summed over all.
struct Figures {
  double lossSum = 0;
  int64_t correct = 0;
  int64_t images = 0;          // the epoch's so far
  int64_t imagesThisCall = 0;  // those of the steps this call took
};

// Every rank's figures gathered, then summed in rank order, so every rank has the same sum.
Figures sumOverRanks(distributed::DataParallel* parallel, const Figures& mine) {
  if (!parallel || parallel->worldSize() == 1) return mine;
  Figures total;
  for (const Figures& rank : parallel->communicator().allgather(mine)) {
    total.lossSum += rank.lossSum;
    total.correct += rank.correct;
    total.images += rank.images;
    total.imagesThisCall += rank.imagesThisCall;
  }
  return total;
}

EpochResult summarize(const Figures& figures, int64_t steps, double seconds,
                      double dataWaitSeconds) {
  EpochResult result;
  result.loss = figures.lossSum / figures.images;
  result.accuracy = static_cast<double>(figures.correct) / figures.images;
  result.imagesPerSecond = figures.imagesThisCall / seconds;
  result.seconds = seconds;
  result.dataWaitSeconds = dataWaitSeconds;
  result.images = figures.images;
  result.steps = steps;
  result.lossSum = figures.lossSum;
  result.correct = figures.correct;
  return result;
}
}  // namespace

EpochResult trainEpoch(layers::Module& model, optim::Sgd& optimizer,
                       const optim::LrSchedule& schedule, data::DataLoader& loader, int64_t epoch,
                       const TrainEpochOptions& options) {
  distributed::DataParallel* parallel = options.parallel;
  model.train();
  Device& device = model.device();  // batches come from the loader on the host
  int64_t stepsPerEpoch = loader.batchesPerEpoch();
  if (options.maxSteps > 0) stepsPerEpoch = std::min(stepsPerEpoch, options.maxSteps);
  IMERGE_CHECK(options.start.step <= stepsPerEpoch, "epoch ", epoch + 1,
               " cannot go on after step ", options.start.step, ": it has ", stepsPerEpoch,
               " steps");
  loader.startEpoch(epoch, options.start.step);
  const auto start = Clock::now();
  Figures figures{options.start.lossSum, options.start.correct, options.start.images, 0};
  int64_t step = options.start.step;
  int stoppedBy = 0;
  data::Batch batch;
  while (step < stepsPerEpoch && loader.next(batch)) {
    optimizer.setLearningRate(schedule.learningRate(epoch, step, stepsPerEpoch));
    autograd::Variable logits, loss;
    const autograd::Variable input(batch.images.to(device));
    const Tensor labels = batch.labels.to(device);
    if (parallel) {
      // DataParallel clears the gradients in step(), once they have been used.
      logits = parallel->forward(input);
      loss = autograd::softmaxCrossEntropy(logits, labels);
      parallel->backward(loss);
      parallel->step(optimizer);
    } else {
      optimizer.zeroGrad();
      logits = model.forward(input);
      loss = autograd::softmaxCrossEntropy(logits, labels);
      loss.backward();
      optimizer.step();
    }

    const int64_t count = batch.labels.numel();
    figures.lossSum += static_cast<double>(loss.tensor().item()) * count;
    figures.correct += countCorrect(logits.tensor(), batch.labels);
    figures.images += count;
    figures.imagesThisCall += count;
    ++step;
    if (options.onProgress) {
      const double seconds = secondsSince(start);
      options.onProgress({epoch, step, stepsPerEpoch, figures.lossSum / figures.images,
                          static_cast<double>(figures.correct) / figures.images,
                          figures.imagesThisCall / seconds, optimizer.learningRate()});
    }
    if (options.stopAfterStep && (stoppedBy = options.stopAfterStep()) != 0) break;
  }
  const int64_t steps = step - options.start.step;
  std::vector<distributed::StepBreakdown> breakdowns;
  if (parallel) {
    parallel->synchronize();
    breakdowns = parallel->takeBreakdowns();
    figures = sumOverRanks(parallel, figures);
  }
  EpochResult result = summarize(figures, steps, secondsSince(start), loader.waitSeconds());
  result.stoppedBy = stoppedBy;
  result.breakdowns = std::move(breakdowns);
  return result;
}

EpochResult evaluate(layers::Module& model, data::DataLoader& loader,
                     distributed::DataParallel* parallel) {
  if (parallel) parallel->synchronize();
  model.eval();
  Device& device = model.device();
  autograd::NoGradGuard noGrad;
  const auto start = Clock::now();
  loader.startEpoch(0);
  Figures figures;
  int64_t steps = 0;
  data::Batch batch;
  while (loader.next(batch)) {
    autograd::Variable logits = model.forward(autograd::Variable(batch.images.to(device)));
    const int64_t count = batch.labels.numel();
    figures.lossSum +=
        autograd::softmaxCrossEntropy(logits, batch.labels.to(device)).tensor().item() * count;
    figures.correct += countCorrect(logits.tensor(), batch.labels);
    figures.images += count;
    figures.imagesThisCall += count;
    ++steps;
  }
  return summarize(sumOverRanks(parallel, figures), steps, secondsSince(start),
                   loader.waitSeconds());
}

}  // namespace imerge::training
