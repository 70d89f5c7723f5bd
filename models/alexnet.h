// AlexNet as torchvision defines it (the single-tower "one weird trick" variant of Krizhevsky
// 2014, without local response normalisation), and a small-image variant.
//
// ImageNet stem (config.smallImages == false), for inputs of at least 63x63:
//   [N, C, 224, 224] -conv11x11/4(64)-ReLU-maxpool3/2-> [N, 64, 27, 27]
//     -conv5x5(192)-ReLU-maxpool3/2-> [N, 192, 13, 13]
//     -conv3x3(384)-ReLU-conv3x3(256)-ReLU-conv3x3(256)-ReLU-maxpool3/2-> [N, 256, 6, 6]
//     -avgpool(6x6)-flatten-> [N, 9216]
//     -dropout-linear(4096)-ReLU-dropout-linear(4096)-ReLU-linear(classes)-> [N, classes]
//   61,100,840 parameters in 16 tensors at 3 channels and 1000 classes, as torchvision.
//
// Small images (config.smallImages == true, e.g. CIFAR 32x32 or Fashion-MNIST 28x28): the same
// five convolutions, three max-pools and three linear layers under the same names, with
//   - conv1 3x3 stride 1 padding 1 instead of 11x11 stride 4: a 32x32 image would otherwise
//     shrink to 1x1 before the third convolution;
//   - max-pools 2x2 stride 2 in ceil mode instead of 3x3 stride 2, so 32 -> 16 -> 8 -> 4 and
//     28 -> 14 -> 7 -> 4 alike;
//   - avgpool to 2x2, so the first linear layer takes 256 * 2 * 2 = 1024 features.
// The 4096-wide linear layers stay: they are what makes AlexNet communication-heavy, which is
// the property the distributed experiments care about.
//
// Initialisation: PyTorch's defaults (torchvision's AlexNet sets nothing else).
#pragma once

#include <memory>

#include "models/feature_classifier.h"
#include "models/registry.h"

namespace imerge::models {

std::shared_ptr<FeatureClassifier> alexnet(const ModelConfig& config,
                                           Generator& generator = defaultGenerator());

}  // namespace imerge::models
