// FeatureClassifier: the layout torchvision's AlexNet and VGG share,
//
//   input [N, C, H, W] -features-> [N, C', H', W'] -avgpool-> [N, C', h, w]
//                      -flatten-> [N, C' * h * w] -classifier-> [N, classes]
//
// with children named "features", "avgpool" and "classifier", so parameter names match
// torchvision's state dicts ("features.0.weight", "classifier.6.bias").
#pragma once

#include <memory>
#include <string>

#include "layers/pooling.h"
#include "layers/sequential.h"

namespace imerge::models {

class FeatureClassifier : public layers::Module {
 public:
  FeatureClassifier(std::string name, std::shared_ptr<layers::Sequential> features,
                    std::array<int64_t, 2> pooledSize,
                    std::shared_ptr<layers::Sequential> classifier);

  layers::Variable forward(const layers::Variable& input) override;
  std::string describe() const override;

  layers::Sequential& features() { return *features_; }
  layers::Sequential& classifier() { return *classifier_; }

 private:
  std::string name_;  // "AlexNet", "VGG16_bn", ... for describe()
  std::shared_ptr<layers::Sequential> features_;
  std::shared_ptr<layers::AdaptiveAvgPool2d> avgpool_;
  std::shared_ptr<layers::Sequential> classifier_;
};

}  // namespace imerge::models
