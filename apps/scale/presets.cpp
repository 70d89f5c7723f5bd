// imerge-scale's presets (contract in presets.h). The figures are the publications' own.
#include "apps/scale/presets.h"

#include "core/error.h"

namespace imerge::apps {

const std::vector<Preset>& presets() {
  static const std::vector<Preset> all = [] {
    std::vector<Preset> list;
    list.push_back({.name = "imerge-paper",
                    .description = "the IMerge paper's setting from its published inputs",
                    .models = {"resnet18", "vgg16", "alexnet", "resnet50"},
                    .batchSize = 32,
                    .workers = {4, 8, 16, 32},
                    .cluster = "paper-small+56gb-ib",
                    .singleWorkerImagesPerSecond = {"resnet18=282", "vgg16=313", "alexnet=1951",
                                                    "resnet50=141"},
                    .published = {}});
    Preset ddl{.name = "ddl-resnet50-10gbe",
               .description = "HKBU-HPML/ddl-benchmarks' ResNet-50 on 10GbE, with its measurements",
               .models = {"resnet50"},
               .batchSize = 64,
               .workers = {4, 8, 16, 32},
               .cluster = "10gbe",
               .singleWorkerImagesPerSecond = {"resnet50=253.1"},
               .published = {}};
    const std::map<std::string, std::vector<double>> measured = {
        {"default", {925, 1282, 2485, 4921}},
        {"wfbp", {1015, 1796, 3147, 5113}},
        {"mgwfbp", {1003, 1981, 3785, 6884}}};
    for (const auto& [strategy, imagesPerSecond] : measured) {
      for (size_t i = 0; i < ddl.workers.size(); ++i) {
        ddl.published.push_back({"resnet50", strategy, ddl.workers[i], imagesPerSecond[i]});
      }
    }
    list.push_back(std::move(ddl));
    list.push_back({.name = "imerge",
                    .description = "resnet18, vgg16, alexnet, resnet50 at 4-32 workers",
                    .models = {"resnet18", "vgg16", "alexnet", "resnet50"},
                    .batchSize = 32,
                    .workers = {4, 8, 16, 32},
                    .cluster = "",
                    .singleWorkerImagesPerSecond = {},
                    .published = {}});
    list.push_back({.name = "singa",
                    .description = "SINGA's benchmark: resnet50, batch 32, 1-32 workers",
                    .models = {"resnet50"},
                    .batchSize = 32,
                    .workers = {1, 2, 4, 8, 16, 32},
                    .cluster = "",
                    .singleWorkerImagesPerSecond = {},
                    .published = {}});
    return list;
  }();
  return all;
}

const Preset& presetNamed(const std::string& name) {
  std::string names;
  for (const Preset& preset : presets()) {
    if (preset.name == name) return preset;
    names += (names.empty() ? "" : ", ") + preset.name;
  }
  IMERGE_FAIL("--preset: unknown preset '", name, "'; the presets are ", names);
}

}  // namespace imerge::apps
