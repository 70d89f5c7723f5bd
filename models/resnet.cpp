#include "models/resnet.h"

#include "layers/layers.h"
#include "models/torchvision_init.h"

namespace imerge::models {

using namespace layers;

namespace {

std::shared_ptr<Conv2d> conv3x3(int64_t in, int64_t out, int64_t stride, Generator& generator) {
  return std::make_shared<Conv2d>(in, out, 3, stride, 1, false, generator);
}

std::shared_ptr<Conv2d> conv1x1(int64_t in, int64_t out, int64_t stride, Generator& generator) {
  return std::make_shared<Conv2d>(in, out, 1, stride, 0, false, generator);
}

// torchvision's rule: project the shortcut whenever the block changes resolution or width.
std::shared_ptr<Sequential> makeDownsample(int64_t inPlanes, int64_t outPlanes, int64_t stride,
                                           Generator& generator) {
  if (stride == 1 && inPlanes == outPlanes) return nullptr;
  auto downsample = std::make_shared<Sequential>();
  downsample->add(conv1x1(inPlanes, outPlanes, stride, generator));
  downsample->add(std::make_shared<BatchNorm2d>(outPlanes));
  return downsample;
}

Variable addShortcut(const Variable& residual, const Variable& input,
                     const std::shared_ptr<Sequential>& downsample) {
  return autograd::relu(autograd::add(residual, downsample ? (*downsample)(input) : input));
}

std::string describeChildren(const std::string& name, const Module& module) {
  std::string text = name + "(\n";
  for (const auto& [childName, child] : module.children()) {
    text += "  (" + childName + "): " + child->describe() + "\n";
  }
  return text + ")";
}

}  // namespace

BasicBlock::BasicBlock(int64_t inPlanes, int64_t planes, int64_t stride, Generator& generator)
    : conv1_(registerModule("conv1", conv3x3(inPlanes, planes, stride, generator))),
      bn1_(registerModule("bn1", std::make_shared<BatchNorm2d>(planes))),
      conv2_(registerModule("conv2", conv3x3(planes, planes, 1, generator))),
      bn2_(registerModule("bn2", std::make_shared<BatchNorm2d>(planes))) {
  // torchvision registers a ReLU child between bn2 and downsample; it holds no parameters, so
  // only describe() would notice it. The forward applies relu directly.
  downsample_ = makeDownsample(inPlanes, planes * kExpansion, stride, generator);
  if (downsample_) registerModule("downsample", downsample_);
}

Variable BasicBlock::forward(const Variable& input) {
  Variable out = bn1_->forwardRelu((*conv1_)(input));
  out = (*bn2_)((*conv2_)(out));
  return addShortcut(out, input, downsample_);
}

std::string BasicBlock::describe() const {
  return describeChildren("BasicBlock", *this);
}

Bottleneck::Bottleneck(int64_t inPlanes, int64_t planes, int64_t stride, Generator& generator)
    : conv1_(registerModule("conv1", conv1x1(inPlanes, planes, 1, generator))),
      bn1_(registerModule("bn1", std::make_shared<BatchNorm2d>(planes))),
      conv2_(registerModule("conv2", conv3x3(planes, planes, stride, generator))),
      bn2_(registerModule("bn2", std::make_shared<BatchNorm2d>(planes))),
      conv3_(registerModule("conv3", conv1x1(planes, planes * kExpansion, 1, generator))),
      bn3_(registerModule("bn3", std::make_shared<BatchNorm2d>(planes * kExpansion))) {
  downsample_ = makeDownsample(inPlanes, planes * kExpansion, stride, generator);
  if (downsample_) registerModule("downsample", downsample_);
}

Variable Bottleneck::forward(const Variable& input) {
  Variable out = bn1_->forwardRelu((*conv1_)(input));
  out = bn2_->forwardRelu((*conv2_)(out));
  out = (*bn3_)((*conv3_)(out));
  return addShortcut(out, input, downsample_);
}

std::string Bottleneck::describe() const {
  return describeChildren("Bottleneck", *this);
}

ResNet::ResNet(const ResNetSpec& spec, int64_t inChannels, int64_t classes, Generator& generator)
    : spec_(spec) {
  IMERGE_CHECK(
      !spec.blocksPerStage.empty() && spec.blocksPerStage.size() == spec.stageWidths.size(),
      "ResNet: ", spec.name, " needs one width per stage, got ", spec.blocksPerStage.size(),
      " stages and ", spec.stageWidths.size(), " widths");
  IMERGE_CHECK(inChannels > 0 && classes > 0, "ResNet: ", spec.name,
               " needs positive input channels and classes, got ", inChannels, " and ", classes);
  const int64_t stemWidth = spec.stageWidths.front();
  auto add = [this](const std::string& name, std::shared_ptr<Module> module) {
    sequence_.push_back(registerModule(name, std::move(module)));
  };
  if (spec.stem == ResNetSpec::Stem::ImageNet) {
    stemConv_ = registerModule(
        "conv1", std::make_shared<Conv2d>(inChannels, stemWidth, 7, 2, 3, false, generator));
  } else {
    stemConv_ = registerModule("conv1", conv3x3(inChannels, stemWidth, 1, generator));
  }
  stemBn_ = registerModule("bn1", std::make_shared<BatchNorm2d>(stemWidth));
  // torchvision's relu child, for describe(); the forward fuses it into bn1 (forwardRelu).
  registerModule("relu", std::make_shared<ReLU>());
  if (spec.stem == ResNetSpec::Stem::ImageNet) add("maxpool", std::make_shared<MaxPool2d>(3, 2, 1));

  const bool bottleneck = spec.block == ResNetSpec::Block::Bottleneck;
  const int64_t expansion = bottleneck ? Bottleneck::kExpansion : BasicBlock::kExpansion;
  int64_t inPlanes = stemWidth;
  for (size_t stage = 0; stage < spec.blocksPerStage.size(); ++stage) {
    const int64_t planes = spec.stageWidths[stage];
    auto layer = std::make_shared<Sequential>();
    for (int64_t block = 0; block < spec.blocksPerStage[stage]; ++block) {
      // The first block of every stage but the first halves the resolution.
      const int64_t stride = (block == 0 && stage > 0) ? 2 : 1;
      if (bottleneck) {
        layer->add(std::make_shared<Bottleneck>(inPlanes, planes, stride, generator));
      } else {
        layer->add(std::make_shared<BasicBlock>(inPlanes, planes, stride, generator));
      }
      inPlanes = planes * expansion;
    }
    add("layer" + std::to_string(stage + 1), layer);
  }
  add("avgpool", std::make_shared<AdaptiveAvgPool2d>(std::array<int64_t, 2>{1, 1}));
  fc_ = registerModule("fc", std::make_shared<Linear>(inPlanes, classes, true, generator));
  internal::initConvsKaimingFanOut(*this, generator);
}

Variable ResNet::forward(const Variable& input) {
  Variable current = stemBn_->forwardRelu((*stemConv_)(input));
  for (const auto& module : sequence_) current = (*module)(current);
  return (*fc_)(autograd::flatten(current));
}

std::string ResNet::describe() const {
  return describeChildren(spec_.name, *this);
}

std::shared_ptr<ResNet> resnet(int depth, const ModelConfig& config, Generator& generator) {
  ResNetSpec spec;
  spec.name = "ResNet" + std::to_string(depth);
  spec.stageWidths = {64, 128, 256, 512};
  spec.stem = config.smallImages ? ResNetSpec::Stem::Small : ResNetSpec::Stem::ImageNet;
  switch (depth) {
    case 18:
      spec.blocksPerStage = {2, 2, 2, 2};
      break;
    case 34:
      spec.blocksPerStage = {3, 4, 6, 3};
      break;
    case 50:
      spec.blocksPerStage = {3, 4, 6, 3};
      break;
    case 101:
      spec.blocksPerStage = {3, 4, 23, 3};
      break;
    case 152:
      spec.blocksPerStage = {3, 8, 36, 3};
      break;
    default:
      IMERGE_FAIL("resnet: depth ", depth, " is not one of 18, 34, 50, 101, 152");
  }
  spec.block = depth >= 50 ? ResNetSpec::Block::Bottleneck : ResNetSpec::Block::Basic;
  return std::make_shared<ResNet>(spec, config.inChannels, config.classes, generator);
}

}  // namespace imerge::models
