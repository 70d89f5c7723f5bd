// Beliefs per strategy (contract and the table of sources in belief.h).
#include "distributed/planning/belief.h"

#include <algorithm>
#include <set>

#include "core/error.h"
#include "distributed/planning/planner.h"

namespace imerge::distributed {
namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string list;
  for (const std::string& name : names) list += (list.empty() ? "" : ", ") + name;
  return list;
}

}  // namespace

const std::vector<std::string>& beliefSourcesFor(const std::string& strategy) {
  static const std::vector<std::string> mgwfbp = {"linear-32k-2m", "linear-all", "piecewise",
                                                  "truth"};
  static const std::vector<std::string> imerge = {"piecewise", "truth", "linear-32k-2m",
                                                  "linear-all"};
  static const std::vector<std::string> fusion = {"horovod-64mib", "horovod-128mib"};
  static const std::vector<std::string> sizesOnly = {"sizes-only"};
  if (strategy == "mgwfbp") return mgwfbp;
  if (strategy == "imerge" || strategy == "imerge-overlap") return imerge;
  if (strategy == "fusion") return fusion;
  const std::vector<std::string>& names = strategyNames();
  IMERGE_CHECK(std::find(names.begin(), names.end(), strategy) != names.end(), "unknown strategy '",
               strategy, "'; the strategies are ", joined(names));
  return sizesOnly;
}

const std::string& defaultBeliefSource(const std::string& strategy) {
  return beliefSourcesFor(strategy).front();
}

std::string describeBeliefSource(const std::string& source) {
  if (source == "linear-32k-2m") {
    return "least squares a + bM over the samples of 32 KiB to 2 MiB (MG-WFBP's code)";
  }
  if (source == "linear-all") return "least squares a + bM over every sample";
  if (source == "piecewise") return "piecewise fit of every sample (IMerge's model)";
  if (source == "truth") return "the cluster's cost exactly as given";
  if (source == "horovod-64mib") return "fusion threshold 64 MiB (Horovod before 0.21)";
  if (source == "horovod-128mib") return "fusion threshold 128 MiB (Horovod 0.21 and later)";
  if (source == "sizes-only") return "none: the plan depends on tensor sizes alone";
  IMERGE_FAIL("unknown belief source '", source, "'");
}

std::map<std::string, std::string> parseBeliefFlag(const std::vector<std::string>& entries,
                                                   const std::string& flag) {
  std::map<std::string, std::string> chosen;
  for (const std::string& entry : entries) {
    const size_t equals = entry.find('=');
    IMERGE_CHECK(equals != std::string::npos, flag, " ", entry,
                 ": expected STRATEGY=SOURCE, e.g. mgwfbp=linear-all");
    const std::string strategy = entry.substr(0, equals);
    const std::string source = entry.substr(equals + 1);
    const std::vector<std::string>* sources = nullptr;
    try {
      sources = &beliefSourcesFor(strategy);
    } catch (const Error& error) {
      IMERGE_FAIL(flag, " ", entry, ": ", error.what());
    }
    IMERGE_CHECK(std::find(sources->begin(), sources->end(), source) != sources->end(), flag, " ",
                 entry, ": '", source, "' is not a belief of ", strategy, "; it takes ",
                 joined(*sources));
    IMERGE_CHECK(chosen.emplace(strategy, source).second, flag, " ", entry, ": ", strategy,
                 " was given a belief twice");
  }
  return chosen;
}

size_t fusionThresholdBytes(const std::string& source) {
  if (source == "horovod-64mib") return size_t{64} << 20;
  if (source == "horovod-128mib") return size_t{128} << 20;
  IMERGE_FAIL("'", source, "' is not a fusion threshold (horovod-64mib or horovod-128mib)");
}

std::shared_ptr<const CommModel> beliefModel(const std::string& source,
                                             const std::vector<CommSample>& samples,
                                             std::shared_ptr<const CommModel> truth) {
  if (source == "truth") {
    IMERGE_CHECK(truth != nullptr, "belief 'truth': no cluster cost to plan with");
    return truth;
  }
  if (source == "piecewise") return std::make_shared<PiecewiseCommModel>(fitPiecewise(samples));
  if (source == "linear-32k-2m") {
    std::vector<CommSample> inRange;
    std::set<size_t> sizes;
    for (const CommSample& sample : samples) {
      if (sample.bytes < kMgwfbpFitMinBytes || sample.bytes > kMgwfbpFitMaxBytes) continue;
      inRange.push_back(sample);
      sizes.insert(sample.bytes);
    }
    IMERGE_CHECK(sizes.size() >= 2, "belief 'linear-32k-2m': MG-WFBP fits its line on messages of ",
                 "32 KiB to 2 MiB, but the samples hold ", sizes.size(),
                 " distinct size(s) there; measure that range (imerge-commbench)");
    return std::make_shared<LinearCommModel>(fitLinear(inRange));
  }
  describeBeliefSource(source);  // refuses an unknown source by name
  return std::make_shared<LinearCommModel>(fitLinear(samples));
}

}  // namespace imerge::distributed
