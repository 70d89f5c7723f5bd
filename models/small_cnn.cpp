#include "models/small_cnn.h"

#include "layers/layers.h"

namespace imerge::models {

using namespace layers;

std::shared_ptr<Sequential> smallCnn(int64_t inChannels, int64_t classes, Generator& generator) {
  auto net = std::make_shared<Sequential>();
  net->add(std::make_shared<Conv2d>(inChannels, 32, 3, 1, 1, false, generator));
  net->add(std::make_shared<BatchNorm2d>(32));
  net->add(std::make_shared<ReLU>());
  net->add(std::make_shared<MaxPool2d>(2));
  net->add(std::make_shared<Conv2d>(32, 64, 3, 1, 1, false, generator));
  net->add(std::make_shared<BatchNorm2d>(64));
  net->add(std::make_shared<ReLU>());
  net->add(std::make_shared<MaxPool2d>(2));
  net->add(std::make_shared<Flatten>());
  net->add(std::make_shared<Linear>(64 * 7 * 7, 128, true, generator));
  net->add(std::make_shared<ReLU>());
  net->add(std::make_shared<Dropout>(0.25f, generator));
  net->add(std::make_shared<Linear>(128, classes, true, generator));
  return net;
}

}  // namespace imerge::models
