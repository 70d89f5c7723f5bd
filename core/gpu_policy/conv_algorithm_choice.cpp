#include "core/gpu_policy/conv_algorithm_choice.h"

#include <algorithm>
#include <sstream>

namespace imerge::cuda {

std::optional<size_t> chooseAlgorithm(const std::vector<AlgorithmTrial>& trials,
                                      const AlgorithmRequirements& requirements) {
  std::optional<size_t> best;
  for (size_t i = 0; i < trials.size(); ++i) {
    const AlgorithmTrial& trial = trials[i];
    if (!trial.succeeded) continue;
    if (trial.workspaceBytes > requirements.workspaceLimitBytes) continue;
    if (requirements.deterministic && !trial.deterministic) continue;
    if (requirements.fmaMathOnly && !trial.fmaMath) continue;
    // cuDNN sorts by time already; comparing keeps the rule independent of that promise.
    if (!best || trial.milliseconds < trials[*best].milliseconds) best = i;
  }
  return best;
}

std::string describeTrials(const std::vector<AlgorithmTrial>& trials) {
  if (trials.empty()) return "cuDNN reported no algorithm";
  std::ostringstream text;
  for (size_t i = 0; i < trials.size(); ++i) {
    const AlgorithmTrial& trial = trials[i];
    if (i > 0) text << "; ";
    text << "algorithm " << trial.algorithm << ": ";
    if (!trial.succeeded) {
      text << "failed";
      continue;
    }
    text << trial.milliseconds << " ms, " << trial.workspaceBytes << " bytes, "
         << (trial.deterministic ? "deterministic" : "non-deterministic") << ", "
         << (trial.fmaMath ? "FMA math" : "tensor-op math");
  }
  return text.str();
}

size_t firstSearchWorkspaceBytes(size_t limitBytes, size_t largestAskBytes) {
  return std::min(limitBytes, largestAskBytes);
}

size_t nextSearchWorkspaceBytes(size_t failedBytes) {
  constexpr size_t kSmallest = size_t{1} << 20;
  const size_t half = failedBytes / 2;
  return half < kSmallest ? 0 : half;
}

}  // namespace imerge::cuda
