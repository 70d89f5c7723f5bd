#include "models/cifar_resnet.h"

namespace imerge::models {

std::shared_ptr<ResNet> cifarResnet(int depth, const ModelConfig& config, Generator& generator) {
  IMERGE_CHECK(depth >= 8 && (depth - 2) % 6 == 0, "cifarResnet: depth ", depth,
               " is not 6n + 2 (20, 32, 44, 56, 110, ...)");
  const int64_t blocks = (depth - 2) / 6;
  ResNetSpec spec;
  spec.name = "CifarResNet" + std::to_string(depth);
  spec.block = ResNetSpec::Block::Basic;
  spec.blocksPerStage = {blocks, blocks, blocks};
  spec.stageWidths = {16, 32, 64};
  spec.stem = ResNetSpec::Stem::Small;
  return std::make_shared<ResNet>(spec, config.inChannels, config.classes, generator);
}

}  // namespace imerge::models
