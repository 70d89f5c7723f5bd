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

EpochResult summarize(double lossSum, int64_t correct, int64_t images, int64_t steps,
                      double seconds, double dataWaitSeconds) {
  return {lossSum / images,
          static_cast<double>(correct) / images,
          images / seconds,
          seconds,
          dataWaitSeconds,
          images,
          steps,
          {}};
}

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Sums an epoch's loss, correct count and images over the ranks: every rank's figures gathered,
// then summed in rank order, so every rank has the same sum.
void sumOverRanks(distributed::DataParallel* parallel, double& lossSum, int64_t& correct,
                  int64_t& images) {
  if (!parallel || parallel->worldSize() == 1) return;
  struct Figures {
    double lossSum;
    int64_t correct;
    int64_t images;
  };
  const std::vector<Figures> perRank =
      parallel->communicator().allgather(Figures{lossSum, correct, images});
  lossSum = 0;
  correct = images = 0;
  for (const Figures& rank : perRank) {
    lossSum += rank.lossSum;
    correct += rank.correct;
    images += rank.images;
  }
}
}  // namespace

EpochResult trainEpoch(layers::Module& model, optim::Sgd& optimizer,
                       const optim::LrSchedule& schedule, data::DataLoader& loader, int64_t epoch,
                       int64_t maxSteps, const std::function<void(const StepProgress&)>& onProgress,
                       distributed::DataParallel* parallel) {
  model.train();
  Device& device = model.device();  // batches come from the loader on the host
  loader.startEpoch(epoch);
  int64_t stepsPerEpoch = loader.batchesPerEpoch();
  if (maxSteps > 0) stepsPerEpoch = std::min(stepsPerEpoch, maxSteps);
  const auto start = Clock::now();
  double lossSum = 0;
  int64_t correct = 0, images = 0, step = 0;
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
  EpochResult result;
  if (parallel) {
    parallel->synchronize();
    std::vector<distributed::StepBreakdown> breakdowns = parallel->takeBreakdowns();
    sumOverRanks(parallel, lossSum, correct, images);
    result = summarize(lossSum, correct, images, step, secondsSince(start), loader.waitSeconds());
    result.breakdowns = std::move(breakdowns);
    return result;
  }
  return summarize(lossSum, correct, images, step, secondsSince(start), loader.waitSeconds());
}

EpochResult evaluate(layers::Module& model, data::DataLoader& loader,
                     distributed::DataParallel* parallel) {
  if (parallel) parallel->synchronize();
  model.eval();
  Device& device = model.device();
  autograd::NoGradGuard noGrad;
  const auto start = Clock::now();
  loader.startEpoch(0);
  double lossSum = 0;
  int64_t correct = 0, images = 0, steps = 0;
  data::Batch batch;
  while (loader.next(batch)) {
    autograd::Variable logits = model.forward(autograd::Variable(batch.images.to(device)));
    const int64_t count = batch.labels.numel();
    lossSum +=
        autograd::softmaxCrossEntropy(logits, batch.labels.to(device)).tensor().item() * count;
    correct += countCorrect(logits.tensor(), batch.labels);
    images += count;
    ++steps;
  }
  sumOverRanks(parallel, lossSum, correct, images);
  return summarize(lossSum, correct, images, steps, secondsSince(start), loader.waitSeconds());
}

}  // namespace imerge::training
