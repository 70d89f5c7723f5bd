#include "optim/lr_schedule.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace imerge::optim {

LrSchedule::LrSchedule(const LrScheduleOptions& options) : options_(options) {
  IMERGE_CHECK(options.baseLr >= 0.0f, "learning-rate schedule: base rate must be >= 0, got ",
               options.baseLr);
  IMERGE_CHECK(options.warmupEpochs >= 0,
               "learning-rate schedule: warm-up epochs must be >= 0, "
               "got ",
               options.warmupEpochs);
  IMERGE_CHECK(options.kind != LrScheduleKind::Step || options.stepEpochs > 0,
               "step schedule: step epochs must be > 0, got ", options.stepEpochs);
  IMERGE_CHECK(options.kind != LrScheduleKind::Cosine || options.totalEpochs > options.warmupEpochs,
               "cosine schedule: total epochs (", options.totalEpochs,
               ") must exceed warm-up epochs (", options.warmupEpochs, ")");
}

float LrSchedule::learningRate(double epoch) const {
  const LrScheduleOptions& o = options_;
  if (epoch < o.warmupEpochs) return static_cast<float>(o.baseLr * epoch / o.warmupEpochs);
  switch (o.kind) {
    case LrScheduleKind::Constant:
      return o.baseLr;
    case LrScheduleKind::Step:
      return static_cast<float>(o.baseLr * std::pow(o.gamma, std::floor(epoch / o.stepEpochs)));
    case LrScheduleKind::Cosine: {
      const double t =
          std::clamp((epoch - o.warmupEpochs) / (o.totalEpochs - o.warmupEpochs), 0.0, 1.0);
      return static_cast<float>(o.minLr + (o.baseLr - o.minLr) * (1.0 + std::cos(M_PI * t)) / 2.0);
    }
  }
  return o.baseLr;
}

LrScheduleKind LrSchedule::parseKind(const std::string& name) {
  if (name == "step") return LrScheduleKind::Step;
  if (name == "cosine") return LrScheduleKind::Cosine;
  if (name == "constant") return LrScheduleKind::Constant;
  IMERGE_FAIL("unknown learning-rate schedule '", name, "': expected step, cosine or constant");
}

}  // namespace imerge::optim
