// VGG-11/13/16/19 (configurations A, B, D, E of Simonyan and Zisserman), with and without
// batch normalisation, as torchvision defines them, and a small-image variant.
//
// ImageNet stem (config.smallImages == false):
//   [N, C, 224, 224] -features-> [N, 512, 7, 7] -avgpool(7x7)-flatten-> [N, 25088]
//     -linear(4096)-ReLU-dropout-linear(4096)-ReLU-dropout-linear(classes)-> [N, classes]
//   features: per configuration entry either conv3x3 padding 1 (+ BatchNorm2d) + ReLU, or
//   maxpool 2x2 stride 2; five max-pools in all, so any input of at least 32x32 works (the
//   adaptive avgpool spreads smaller maps over 7x7, as PyTorch does).
//   VGG-16 has 138,357,544 parameters in 32 tensors at 3 channels and 1000 classes.
//
// Small images (config.smallImages == true): the same features under the same names, with the
// max-pools in ceil mode (28 -> 14 -> 7 -> 4 -> 2 -> 1, where floor mode would reach 0), an
// avgpool to 1x1 and a classifier of 512 -> 512 -> 512 -> classes (the CIFAR VGG of
// pytorch-vgg-cifar10), since a 32x32 image leaves a 1x1 map and 25088 inputs would be 49
// copies of the same 512 values.
//
// Initialisation as torchvision: convolutions kaiming_normal(fan_out, relu) with zero bias,
// batch-norm weight 1 and bias 0, linear layers normal(0, 0.01) with zero bias.
#pragma once

#include <memory>

#include "models/feature_classifier.h"
#include "models/registry.h"

namespace imerge::models {

// depth is 11, 13, 16 or 19.
std::shared_ptr<FeatureClassifier> vgg(int depth, bool batchNorm, const ModelConfig& config,
                                       Generator& generator = defaultGenerator());

}  // namespace imerge::models
