// A small CNN for 28x28 greyscale images (Fashion-MNIST, MNIST): two conv + batch-norm + ReLU
// + max-pool blocks and two linear layers. It is the network of the README's first run and of
// the end-to-end test; the larger models (ResNet, VGG, AlexNet) come with the models issue.
//
//   [N, 1, 28, 28] -conv3x3(32)-BN-ReLU-pool2-> [N, 32, 14, 14]
//                  -conv3x3(64)-BN-ReLU-pool2-> [N, 64, 7, 7] -flatten-> [N, 3136]
//                  -linear(128)-ReLU-dropout-linear(classes)-> [N, classes]
#pragma once

#include <memory>

#include "layers/sequential.h"

namespace imerge::models {

std::shared_ptr<layers::Sequential> smallCnn(int64_t inChannels = 1, int64_t classes = 10,
                                             Generator& generator = defaultGenerator());

}  // namespace imerge::models
