// The model zoo by name: "resnet18", "resnet20", "vgg16_bn", "alexnet", "small_cnn", ...
//
// Every builder takes the same configuration, so imerge-train, imerge-scale and the tests can
// build any model from a name and the data's shape.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/random.h"
#include "layers/module.h"

namespace imerge::models {

struct ModelConfig {
  int64_t inChannels = 3;
  int64_t classes = 1000;
  // ImageNet-size input (224x224: the torchvision stem) or small images (CIFAR/Fashion-MNIST
  // sizes: a 3x3 stride-1 stem without the first max-pool).
  bool smallImages = false;
};

using ModelBuilder =
    std::function<std::shared_ptr<layers::Module>(const ModelConfig&, Generator&)>;

// Builds the named model; an unknown name is an error that lists the known ones.
std::shared_ptr<layers::Module> buildModel(const std::string& name, const ModelConfig& config,
                                           Generator& generator = defaultGenerator());
// Every registered name, sorted.
std::vector<std::string> modelNames();

}  // namespace imerge::models
