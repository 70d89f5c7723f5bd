// Learning-rate schedules with linear warm-up, evaluated per optimizer step so warm-up is
// smooth within an epoch. Epoch e, step s of an epoch of S steps is the fractional epoch
// e + s / S.
//
//   warm-up (epoch < warmupEpochs):  lr = base * epoch / warmupEpochs (linear from 0)
//   step:   lr = base * gamma ^ floor(epoch / stepEpochs)
//   cosine: lr = minLr + (base - minLr) * (1 + cos(pi * t)) / 2, with t the fraction of the
//           post-warm-up epochs done
#pragma once

#include <string>

namespace imerge::optim {

enum class LrScheduleKind { Constant, Step, Cosine };

struct LrScheduleOptions {
  LrScheduleKind kind = LrScheduleKind::Constant;
  float baseLr = 0.1f;
  double warmupEpochs = 0;
  double stepEpochs = 30;  // step: decay every this many epochs
  float gamma = 0.1f;      // step: decay factor
  double totalEpochs = 1;  // cosine: where the schedule reaches minLr
  float minLr = 0.0f;      // cosine
};

class LrSchedule {
 public:
  explicit LrSchedule(const LrScheduleOptions& options);
  // The learning rate at a (fractional) epoch.
  float learningRate(double epoch) const;
  float learningRate(int64_t epoch, int64_t stepInEpoch, int64_t stepsPerEpoch) const {
    return learningRate(static_cast<double>(epoch) +
                        static_cast<double>(stepInEpoch) / static_cast<double>(stepsPerEpoch));
  }

  // "step" or "cosine" (or "constant"); anything else is an error naming the value.
  static LrScheduleKind parseKind(const std::string& name);

 private:
  LrScheduleOptions options_;
};

}  // namespace imerge::optim
