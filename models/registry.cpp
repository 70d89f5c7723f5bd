#include "models/registry.h"

#include <algorithm>
#include <map>

#include "models/alexnet.h"
#include "models/cifar_resnet.h"
#include "models/resnet.h"
#include "models/small_cnn.h"
#include "models/vgg.h"

namespace imerge::models {

namespace {

const std::map<std::string, ModelBuilder>& registry() {
  static const std::map<std::string, ModelBuilder> builders = [] {
    std::map<std::string, ModelBuilder> map;
    map["alexnet"] = [](const ModelConfig& config, Generator& generator) {
      return alexnet(config, generator);
    };
    for (int depth : {11, 13, 16, 19}) {
      for (bool batchNorm : {false, true}) {
        map["vgg" + std::to_string(depth) + (batchNorm ? "_bn" : "")] =
            [depth, batchNorm](const ModelConfig& config, Generator& generator) {
              return vgg(depth, batchNorm, config, generator);
            };
      }
    }
    for (int depth : {18, 34, 50, 101, 152}) {
      map["resnet" + std::to_string(depth)] = [depth](const ModelConfig& config,
                                                      Generator& generator) {
        return resnet(depth, config, generator);
      };
    }
    for (int depth : {20, 32, 44, 56, 110}) {
      map["resnet" + std::to_string(depth)] = [depth](const ModelConfig& config,
                                                      Generator& generator) {
        return cifarResnet(depth, config, generator);
      };
    }
    // Built for 28x28 inputs whatever smallImages says (see small_cnn.h).
    map["small_cnn"] = [](const ModelConfig& config, Generator& generator) {
      return smallCnn(config.inChannels, config.classes, generator);
    };
    return map;
  }();
  return builders;
}

}  // namespace

std::shared_ptr<layers::Module> buildModel(const std::string& name, const ModelConfig& config,
                                           Generator& generator) {
  const auto& builders = registry();
  auto found = builders.find(name);
  if (found == builders.end()) {
    std::string known;
    for (const auto& candidate : modelNames()) known += (known.empty() ? "" : ", ") + candidate;
    IMERGE_FAIL("unknown model '", name, "'; known models: ", known);
  }
  IMERGE_CHECK(config.inChannels > 0 && config.classes > 0, "model '", name,
               "' needs positive input channels and classes, got ", config.inChannels,
               " channels and ", config.classes, " classes");
  return found->second(config, generator);
}

std::vector<std::string> modelNames() {
  std::vector<std::string> names;
  for (const auto& [name, builder] : registry()) names.push_back(name);
  return names;  // std::map keeps them sorted
}

}  // namespace imerge::models
