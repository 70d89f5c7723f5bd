// Compute profiles from a model's FLOPs (contract in flops_profile.h).
//
// The one tricky part: a forward pre-hook sees its module but not the
// module's input, and a convolution's cost depends on its input's height and width. So the
// shapes are read from the model itself: for each convolution in turn, the pre-hook swaps its
// weight for one with one input channel too many, the forward pass stops inside that
// convolution with conv2d's shape error, and the error names the input it was given
// ("conv2d: input float32[1, 64, 56, 56] has 64 channels but weight ..."). One partial forward
// of one image per convolution: about a second for ResNet-50 at 224x224 on two cores. This is
// exact for any model, where re-deriving the shapes from each architecture would duplicate it.
#include "distributed/profiling/flops_profile.h"

#include <cmath>
#include <map>
#include <unordered_map>

#include "autograd/grad_mode.h"
#include "core/error.h"
#include "distributed/planning/csv_fields.h"
#include "layers/conv2d.h"
#include "layers/linear.h"

namespace imerge::distributed {
namespace {

// "float32[1, 64, 56, 56]" after "conv2d: input " in conv2d's shape error -> {1, 64, 56, 56}.
Shape inputShapeFromConvError(const std::string& message, const std::string& layer) {
  const std::string marker = "conv2d: input ";
  const size_t at = message.find(marker);
  const size_t open = at == std::string::npos ? at : message.find('[', at);
  const size_t close = open == std::string::npos ? open : message.find(']', open);
  IMERGE_CHECK(close != std::string::npos, "profileFromFlops: could not read the input shape of ",
               layer, " from the probe's error: ", message);
  Shape shape;
  for (const std::string& field : splitFields(message.substr(open + 1, close - open - 1))) {
    shape.push_back(static_cast<int64_t>(parseWholeNumber(field, layer, "input shape")));
  }
  IMERGE_CHECK(shape.size() == 4, "profileFromFlops: ", layer, "'s input is not 4-D: ", message);
  return shape;
}

// Parameter-owning modules by address, with their dotted names ("layer1.0.conv1").
std::unordered_map<const layers::Module*, std::string> namesOfParameterOwners(
    layers::Module& model) {
  std::unordered_map<const layers::Module*, std::string> names;
  std::vector<std::pair<std::string, layers::Module*>> stack = {{"", &model}};
  while (!stack.empty()) {
    auto [prefix, module] = stack.back();
    stack.pop_back();
    if (!module->ownParameters().empty()) names[module] = prefix;
    for (const auto& [name, child] : module->children()) {
      stack.push_back({prefix.empty() ? name : prefix + "." + name, child.get()});
    }
  }
  return names;
}

// The parameter-owning modules in the order one forward pass of `image` runs them. Every
// pre-hook is removed afterwards: the model must not be held by a DataParallel.
std::vector<layers::Module*> forwardOrder(layers::Module& model, const Tensor& image) {
  const auto names = namesOfParameterOwners(model);
  std::vector<layers::Module*> order;
  for (const auto& [module, name] : names) {
    const_cast<layers::Module*>(module)->setForwardPreHook(
        [&order](layers::Module& self) { order.push_back(&self); });
  }
  try {
    model.forward(autograd::Variable(image));
  } catch (...) {
    for (const auto& [module, name] : names)
      const_cast<layers::Module*>(module)->setForwardPreHook({});
    throw;
  }
  for (const auto& [module, name] : names)
    const_cast<layers::Module*>(module)->setForwardPreHook({});
  return order;
}

// The input shape `conv` receives in a forward pass of `image` (see the file comment).
Shape probeConvInput(layers::Module& model, layers::Conv2d& conv, const Tensor& image,
                     const std::string& layer) {
  autograd::Variable original = conv.weight();
  const Shape& weightShape = original.shape();
  const Tensor wrong =
      Tensor::zeros({weightShape[0], weightShape[1] + 1, weightShape[2], weightShape[3]});
  std::string message;
  conv.setForwardPreHook([&](layers::Module&) { conv.weight() = autograd::Variable(wrong); });
  try {
    model.forward(autograd::Variable(image));
  } catch (const std::exception& error) {
    message = error.what();
  }
  conv.setForwardPreHook({});
  conv.weight() = original;
  IMERGE_CHECK(!message.empty(), "profileFromFlops: the probe of ", layer,
               " ran through without an error; is the layer used in forward?");
  return inputShapeFromConvError(message, layer);
}

}  // namespace

std::vector<LayerMacs> countForwardMacs(layers::Module& model, const Shape& imageShape) {
  IMERGE_CHECK(imageShape.size() == 3, "countForwardMacs: the image shape must be [C, H, W], not ",
               shapeToString(imageShape));
  const bool wasTraining = model.isTraining();
  model.eval();  // batch norm of one image in training mode would divide by zero variance
  autograd::NoGradGuard noGrad;
  Shape batchShape = {1};
  batchShape.insert(batchShape.end(), imageShape.begin(), imageShape.end());
  const Tensor image = Tensor::zeros(batchShape);
  const auto names = namesOfParameterOwners(model);

  std::vector<LayerMacs> layersInOrder;
  try {
    for (layers::Module* module : forwardOrder(model, image)) {
      const std::string& name = names.at(module);
      LayerMacs layer{name, 0};
      if (auto* conv = dynamic_cast<layers::Conv2d*>(module)) {
        const Shape input = probeConvInput(model, *conv, image, name);
        const layers::Conv2dConfig& config = conv->config();
        const auto& o = config.options;
        double outputPositions = 1;
        for (int axis = 0; axis < 2; ++axis) {
          const int64_t span = o.dilation[axis] * (config.kernel[axis] - 1) + 1;
          outputPositions *= static_cast<double>(
              (input[2 + axis] + 2 * o.padding[axis] - span) / o.stride[axis] + 1);
        }
        layer.macs = outputPositions * static_cast<double>(config.outChannels) *
                     static_cast<double>(config.inChannels / o.groups) *
                     static_cast<double>(config.kernel[0] * config.kernel[1]);
      } else if (auto* linear = dynamic_cast<layers::Linear*>(module)) {
        layer.macs = static_cast<double>(linear->weight().numel());
      }
      layersInOrder.push_back(std::move(layer));
    }
  } catch (...) {
    model.train(wasTraining);
    throw;
  }
  model.train(wasTraining);
  return layersInOrder;
}

ComputeProfile profileFromFlops(layers::Module& model, const Shape& imageShape,
                                int64_t batchPerWorker, double gigaflops) {
  IMERGE_CHECK(batchPerWorker >= 1,
               "profileFromFlops: the batch per worker must be at least 1, not ", batchPerWorker);
  IMERGE_CHECK(std::isfinite(gigaflops) && gigaflops > 0,
               "profileFromFlops: the device speed must be a positive number of GFLOP/s, not ",
               gigaflops);
  const std::vector<LayerMacs> macs = countForwardMacs(model, imageShape);
  // Parameters of each layer by its name prefix, in registration order.
  std::map<std::string, std::vector<std::pair<std::string, size_t>>> tensorsOf;
  for (const auto& [name, parameter] : model.namedParameters()) {
    const size_t dot = name.find_last_of('.');
    const std::string owner = dot == std::string::npos ? "" : name.substr(0, dot);
    tensorsOf[owner].push_back({name, parameter.tensor().bytes()});
  }
  const double flopsPerSecond = gigaflops * 1e9;
  ComputeProfile profile;
  profile.batchPerWorker = batchPerWorker;
  for (auto layer = macs.rbegin(); layer != macs.rend(); ++layer) {
    const double forward = 2.0 * layer->macs * static_cast<double>(batchPerWorker) / flopsPerSecond;
    const auto& tensors = tensorsOf[layer->name];
    // Backward produces a layer's tensors together; reverse registration order (bias first)
    // as the grad functions of linear layers deliver them.
    for (auto tensor = tensors.rbegin(); tensor != tensors.rend(); ++tensor) {
      const bool first = tensor == tensors.rbegin();
      profile.tensors.push_back({tensor->first, tensor->second, first ? 2.0 * forward : 0.0});
      profile.forwardSecondsPerTensor.push_back(first ? forward : 0.0);
    }
  }
  validateComputeProfile(profile, "profileFromFlops");
  return profile;
}

}  // namespace imerge::distributed
