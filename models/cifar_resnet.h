// The CIFAR-10 ResNets of He et al. 2016 (section 4.2): ResNet-20/32/44/56/110, depth 6n + 2.
//
//   [N, C, 32, 32] -conv1 3x3(16)-bn1-relu-> [N, 16, 32, 32]
//     -layer1: n BasicBlocks(16)-> [N, 16, 32, 32] -layer2: n BasicBlocks(32)-> [N, 32, 16, 16]
//     -layer3: n BasicBlocks(64)-> [N, 64, 8, 8] -avgpool(1x1)-flatten-> [N, 64] -fc-> [N, classes]
//
// with n = 3, 5, 7, 9, 18 for depth 20, 32, 44, 56, 110. Any input size works (28x28 Fashion-
// MNIST reaches layer3 at 7x7) and any channel count.
//
// Shortcuts: option B of the paper, a projection (1x1 convolution with stride 2 + BatchNorm2d,
// named "downsample" as in torchvision) where the width doubles, identity elsewhere. Option A
// (zero-padded identity, parameter-free) would need a channel-padding op that autograd does not
// have, and B is what torchvision's BasicBlock does, so the blocks are shared with resnet.h. B
// adds 2,752 parameters to every depth (16*32 + 2*32 and 32*64 + 2*64 for the two
// projections): ResNet-20/32/44/56/110 have 272,474 / 466,906 / 661,338 / 855,770 / 1,730,714
// parameters at 3 channels and 10 classes (option A: 269,722 ...), still the paper's
// 0.27M / 0.46M / 0.66M / 0.85M / 1.7M. tests/reference/torch_models.py builds the same
// network in PyTorch for the counts and logits tests.
//
// The architecture is a small-image one by design, so config.smallImages changes nothing.
// Initialisation as the ImageNet ResNets: kaiming_normal(fan_out) convolutions, batch-norm 1/0,
// PyTorch's default for fc.
#pragma once

#include <memory>

#include "models/resnet.h"

namespace imerge::models {

// depth is 6n + 2 for n >= 1: 20, 32, 44, 56 and 110 are the paper's.
std::shared_ptr<ResNet> cifarResnet(int depth, const ModelConfig& config,
                                    Generator& generator = defaultGenerator());

}  // namespace imerge::models
