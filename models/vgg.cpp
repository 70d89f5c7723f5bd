#include "models/vgg.h"

#include <vector>

#include "layers/layers.h"
#include "models/torchvision_init.h"

namespace imerge::models {

using namespace layers;

namespace {

constexpr int kMaxPool = 0;  // a configuration entry that is a max-pool, not a convolution

// torchvision's cfgs "A", "B", "D", "E".
std::vector<int> configuration(int depth) {
  const int M = kMaxPool;
  switch (depth) {
    case 11:
      return {64, M, 128, M, 256, 256, M, 512, 512, M, 512, 512, M};
    case 13:
      return {64, 64, M, 128, 128, M, 256, 256, M, 512, 512, M, 512, 512, M};
    case 16:
      return {64, 64, M, 128, 128, M, 256, 256, 256, M, 512, 512, 512, M, 512, 512, 512, M};
    case 19:
      return {64,  64,  M,   128, 128, M,   256, 256, 256, 256, M,
              512, 512, 512, 512, M,   512, 512, 512, 512, M};
    default:
      IMERGE_FAIL("vgg: depth ", depth, " is not one of 11, 13, 16, 19");
  }
}

}  // namespace

std::shared_ptr<FeatureClassifier> vgg(int depth, bool batchNorm, const ModelConfig& config,
                                       Generator& generator) {
  const bool small = config.smallImages;
  auto features = std::make_shared<Sequential>();
  int64_t channels = config.inChannels;
  for (int entry : configuration(depth)) {
    if (entry == kMaxPool) {
      features->add(std::make_shared<MaxPool2d>(2, 2, 0, /*ceilMode=*/small));
      continue;
    }
    features->add(std::make_shared<Conv2d>(channels, entry, 3, 1, 1, true, generator));
    if (batchNorm) features->add(std::make_shared<BatchNorm2d>(entry));
    features->add(std::make_shared<ReLU>());
    channels = entry;
  }

  const int64_t pooled = small ? 1 : 7;
  const int64_t hidden = small ? 512 : 4096;
  auto classifier = std::make_shared<Sequential>();
  classifier->add(std::make_shared<Linear>(512 * pooled * pooled, hidden, true, generator));
  classifier->add(std::make_shared<ReLU>());
  classifier->add(std::make_shared<Dropout>(0.5f, generator));
  classifier->add(std::make_shared<Linear>(hidden, hidden, true, generator));
  classifier->add(std::make_shared<ReLU>());
  classifier->add(std::make_shared<Dropout>(0.5f, generator));
  classifier->add(std::make_shared<Linear>(hidden, config.classes, true, generator));

  auto model = std::make_shared<FeatureClassifier>(
      detail::concat("VGG", depth, batchNorm ? "_bn" : "", small ? "_small" : ""),
      std::move(features), std::array<int64_t, 2>{pooled, pooled}, std::move(classifier));
  internal::initConvsKaimingFanOut(*model, generator);
  internal::initLinearsNormal(*model, 0.01f, generator);
  return model;
}

}  // namespace imerge::models
