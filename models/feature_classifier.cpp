#include "models/feature_classifier.h"

#include "autograd/ops/elementwise.h"

namespace imerge::models {

FeatureClassifier::FeatureClassifier(std::string name, std::shared_ptr<layers::Sequential> features,
                                     std::array<int64_t, 2> pooledSize,
                                     std::shared_ptr<layers::Sequential> classifier)
    : name_(std::move(name)),
      features_(registerModule("features", std::move(features))),
      avgpool_(registerModule("avgpool", std::make_shared<layers::AdaptiveAvgPool2d>(pooledSize))),
      classifier_(registerModule("classifier", std::move(classifier))) {}

layers::Variable FeatureClassifier::forward(const layers::Variable& input) {
  return (*classifier_)(autograd::flatten((*avgpool_)((*features_)(input))));
}

std::string FeatureClassifier::describe() const {
  return name_ + "(\n  (features): " + features_->describe() +
         "\n  (avgpool): " + avgpool_->describe() + "\n  (classifier): " + classifier_->describe() +
         "\n)";
}

}  // namespace imerge::models
