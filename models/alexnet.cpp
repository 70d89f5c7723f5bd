#include "models/alexnet.h"

#include "layers/layers.h"

namespace imerge::models {

using namespace layers;

std::shared_ptr<FeatureClassifier> alexnet(const ModelConfig& config, Generator& generator) {
  const bool small = config.smallImages;
  // Small images pool 2x2 in ceil mode (see the header); ImageNet pools 3x3 stride 2.
  auto pool = [small] {
    return small ? std::make_shared<MaxPool2d>(2, 2, 0, true) : std::make_shared<MaxPool2d>(3, 2);
  };

  auto features = std::make_shared<Sequential>();
  if (small) {
    features->add(std::make_shared<Conv2d>(config.inChannels, 64, 3, 1, 1, true, generator));
  } else {
    features->add(std::make_shared<Conv2d>(config.inChannels, 64, 11, 4, 2, true, generator));
  }
  features->add(std::make_shared<ReLU>());
  features->add(pool());
  features->add(std::make_shared<Conv2d>(64, 192, 5, 1, 2, true, generator));
  features->add(std::make_shared<ReLU>());
  features->add(pool());
  features->add(std::make_shared<Conv2d>(192, 384, 3, 1, 1, true, generator));
  features->add(std::make_shared<ReLU>());
  features->add(std::make_shared<Conv2d>(384, 256, 3, 1, 1, true, generator));
  features->add(std::make_shared<ReLU>());
  features->add(std::make_shared<Conv2d>(256, 256, 3, 1, 1, true, generator));
  features->add(std::make_shared<ReLU>());
  features->add(pool());

  const int64_t pooled = small ? 2 : 6;
  auto classifier = std::make_shared<Sequential>();
  classifier->add(std::make_shared<Dropout>(0.5f, generator));
  classifier->add(std::make_shared<Linear>(256 * pooled * pooled, 4096, true, generator));
  classifier->add(std::make_shared<ReLU>());
  classifier->add(std::make_shared<Dropout>(0.5f, generator));
  classifier->add(std::make_shared<Linear>(4096, 4096, true, generator));
  classifier->add(std::make_shared<ReLU>());
  classifier->add(std::make_shared<Linear>(4096, config.classes, true, generator));

  return std::make_shared<FeatureClassifier>(
      small ? "AlexNet_small" : "AlexNet", std::move(features),
      std::array<int64_t, 2>{pooled, pooled}, std::move(classifier));
}

}  // namespace imerge::models
