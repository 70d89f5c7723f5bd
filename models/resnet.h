// ResNet-18/34/50/101/152 (He et al. 2016) as torchvision defines them, with the ImageNet stem
// or a small-image stem, and the residual blocks they are made of.
//
// ImageNet stem (config.smallImages == false):
//   [N, C, 224, 224] -conv1 7x7/2(64)-bn1-relu-maxpool 3x3/2-> [N, 64, 56, 56]
//     -layer1-> [N, 64e, 56, 56] -layer2-> [N, 128e, 28, 28] -layer3-> [N, 256e, 14, 14]
//     -layer4-> [N, 512e, 7, 7] -avgpool(1x1)-flatten-> [N, 512e] -fc-> [N, classes]
//   with e the block's expansion (1 for BasicBlock, 4 for Bottleneck). Any input of at least
//   32x32 works (layer4 then sees 1x1).
// Small images (config.smallImages == true): conv1 is 3x3 stride 1 padding 1 and there is no
// max-pool, so a 32x32 image reaches layer4 at 4x4 (the usual CIFAR adaptation, e.g.
// kuangliu/pytorch-cifar). Parameter names are unchanged; conv1 just has a smaller kernel.
//
// Blocks per stage: 18 {2,2,2,2} and 34 {3,4,6,3} of BasicBlock; 50 {3,4,6,3}, 101 {3,4,23,3},
// 152 {3,8,36,3} of Bottleneck (torchvision's "v1.5": the stride sits on the 3x3 conv).
// ResNet-18 has 11,689,512 parameters in 62 tensors, ResNet-50 25,557,032 in 161, at 3
// channels and 1000 classes, as torchvision.
//
// Names and order follow torchvision's state dict: conv1.weight, bn1.weight, bn1.bias,
// layer1.0.conv1.weight, ..., layer2.0.downsample.0.weight, layer2.0.downsample.1.weight, ...,
// fc.weight, fc.bias. Initialisation as torchvision: convolutions kaiming_normal(fan_out,
// relu), batch-norm weight 1 and bias 0, fc PyTorch's default (zero_init_residual off).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "layers/batch_norm.h"
#include "layers/conv2d.h"
#include "layers/linear.h"
#include "layers/pooling.h"
#include "layers/sequential.h"
#include "models/registry.h"

namespace imerge::models {

// Two 3x3 convolutions and an identity (or projected) shortcut:
//   out = relu(bn2(conv2(relu(bn1(conv1(x))))) + shortcut(x))
//   [N, inPlanes, H, W] -> [N, planes, H / stride, W / stride]
// The shortcut is `downsample` (1x1 conv with the block's stride + BatchNorm2d) when the shape
// changes, otherwise x itself.
class BasicBlock : public layers::Module {
 public:
  static constexpr int64_t kExpansion = 1;
  BasicBlock(int64_t inPlanes, int64_t planes, int64_t stride, Generator& generator);

  layers::Variable forward(const layers::Variable& input) override;
  std::string describe() const override;
  bool hasDownsample() const { return downsample_ != nullptr; }

 private:
  std::shared_ptr<layers::Conv2d> conv1_;
  std::shared_ptr<layers::BatchNorm2d> bn1_;
  std::shared_ptr<layers::Conv2d> conv2_;
  std::shared_ptr<layers::BatchNorm2d> bn2_;
  std::shared_ptr<layers::Sequential> downsample_;  // null for an identity shortcut
};

// 1x1 reduce, 3x3 (carrying the stride), 1x1 expand by 4, and a shortcut:
//   [N, inPlanes, H, W] -> [N, 4 * planes, H / stride, W / stride]
class Bottleneck : public layers::Module {
 public:
  static constexpr int64_t kExpansion = 4;
  Bottleneck(int64_t inPlanes, int64_t planes, int64_t stride, Generator& generator);

  layers::Variable forward(const layers::Variable& input) override;
  std::string describe() const override;
  bool hasDownsample() const { return downsample_ != nullptr; }

 private:
  std::shared_ptr<layers::Conv2d> conv1_;
  std::shared_ptr<layers::BatchNorm2d> bn1_;
  std::shared_ptr<layers::Conv2d> conv2_;
  std::shared_ptr<layers::BatchNorm2d> bn2_;
  std::shared_ptr<layers::Conv2d> conv3_;
  std::shared_ptr<layers::BatchNorm2d> bn3_;
  std::shared_ptr<layers::Sequential> downsample_;  // null for an identity shortcut
};

// What distinguishes one ResNet from another; the CIFAR ResNets (cifar_resnet.h) use it too.
struct ResNetSpec {
  enum class Block { Basic, Bottleneck };
  enum class Stem {
    ImageNet,  // conv 7x7 stride 2 padding 3, batch-norm, ReLU, max-pool 3x3 stride 2 padding 1
    Small,     // conv 3x3 stride 1 padding 1, batch-norm, ReLU
  };
  std::string name;  // "ResNet18", for describe()
  Block block = Block::Basic;
  std::vector<int64_t> blocksPerStage;  // one entry per stage: layer1, layer2, ...
  std::vector<int64_t> stageWidths;     // planes per stage; the stem has stageWidths[0]
  Stem stem = Stem::ImageNet;
};

// The stem, the stages (each but the first halving the resolution), global average pooling and
// one linear layer. Children: conv1, bn1, relu, [maxpool], layer1 .. layerK, avgpool, fc.
class ResNet : public layers::Module {
 public:
  ResNet(const ResNetSpec& spec, int64_t inChannels, int64_t classes, Generator& generator);

  layers::Variable forward(const layers::Variable& input) override;  // [N, C, H, W] -> [N, classes]
  std::string describe() const override;
  const ResNetSpec& spec() const { return spec_; }

 private:
  ResNetSpec spec_;
  std::shared_ptr<layers::Module> stemConv_;               // conv1
  std::shared_ptr<layers::BatchNorm2d> stemBn_;            // bn1, with the relu child fused into it
  std::vector<std::shared_ptr<layers::Module>> sequence_;  // the children after relu, but fc
  std::shared_ptr<layers::Linear> fc_;
};

// depth is 18, 34, 50, 101 or 152.
std::shared_ptr<ResNet> resnet(int depth, const ModelConfig& config,
                               Generator& generator = defaultGenerator());

}  // namespace imerge::models
