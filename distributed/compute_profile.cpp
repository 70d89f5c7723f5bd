// Compute profiles (contract in compute_profile.h).
//
// The one tricky part is profileFromFlops: a forward pre-hook sees its module but not the
// module's input, and a convolution's cost depends on its input's height and width. So the
// shapes are read from the model itself: for each convolution in turn, the pre-hook swaps its
// weight for one with one input channel too many, the forward pass stops inside that
// convolution with conv2d's shape error, and the error names the input it was given
// ("conv2d: input float32[1, 64, 56, 56] has 64 channels but weight ..."). One partial forward
// of one image per convolution: about a second for ResNet-50 at 224x224 on two cores. This is
// exact for any model, where re-deriving the shapes from each architecture would duplicate it.
#include "distributed/compute_profile.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <unordered_map>

#include "autograd/grad_mode.h"
#include "core/error.h"
#include "distributed/csv_fields.h"
#include "layers/conv2d.h"
#include "layers/linear.h"

namespace imerge::distributed {
namespace {

bool endsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// ---- JSON fields ----

double jsonNumber(const nlohmann::json& object, const std::string& key, const std::string& where) {
  IMERGE_CHECK(object.contains(key), where, ": field '", key, "' is missing");
  const nlohmann::json& value = object.at(key);
  IMERGE_CHECK(value.is_number(), where, ": field '", key, "' is ", value.dump(),
               ", which is not a number");
  const double number = value.get<double>();
  IMERGE_CHECK(std::isfinite(number), where, ": field '", key, "' is not finite");
  IMERGE_CHECK(number >= 0, where, ": field '", key, "' is ", number, ", which is negative");
  return number;
}

ComputeProfile readJson(const std::string& path) {
  std::ifstream file = openTableFile(path, "compute profile");
  nlohmann::json document;
  try {
    document = nlohmann::json::parse(file);
  } catch (const nlohmann::json::exception& error) {
    IMERGE_FAIL(path, ": not valid JSON (", error.what(), ")");
  }
  IMERGE_CHECK(document.is_object(), path, ": a compute profile is a JSON object");
  ComputeProfile profile;
  if (document.contains("model")) {
    IMERGE_CHECK(document["model"].is_string(), path, ": field 'model' must be a string");
    profile.model = document["model"].get<std::string>();
  }
  if (document.contains("batch_per_worker")) {
    const double batch = jsonNumber(document, "batch_per_worker", path);
    IMERGE_CHECK(batch == std::floor(batch), path, ": field 'batch_per_worker' is ", batch,
                 ", which is not a whole number");
    profile.batchPerWorker = static_cast<int64_t>(batch);
  }
  if (document.contains("optimizer_seconds")) {
    profile.optimizerSeconds = jsonNumber(document, "optimizer_seconds", path);
  }
  if (document.contains("other_seconds")) {
    profile.otherSeconds = jsonNumber(document, "other_seconds", path);
  }
  IMERGE_CHECK(document.contains("tensors") && document["tensors"].is_array(), path,
               ": field 'tensors' (an array of {name, bytes, backward_seconds, "
               "forward_seconds}) is missing");
  const nlohmann::json& tensors = document["tensors"];
  for (size_t k = 0; k < tensors.size(); ++k) {
    const std::string where = detail::concat(path, ": tensors[", k, "]");
    const nlohmann::json& entry = tensors[k];
    IMERGE_CHECK(entry.is_object(), where, " is not an object");
    IMERGE_CHECK(entry.contains("name") && entry["name"].is_string(), where,
                 ": field 'name' is missing or not a string");
    TensorInfo tensor;
    tensor.name = entry["name"].get<std::string>();
    const double bytes = jsonNumber(entry, "bytes", where);
    IMERGE_CHECK(bytes == std::floor(bytes) && bytes < 9.0e15, where, ": field 'bytes' is ", bytes,
                 ", which is not a whole number");
    tensor.bytes = static_cast<size_t>(bytes);
    tensor.backwardSeconds = jsonNumber(entry, "backward_seconds", where);
    profile.tensors.push_back(std::move(tensor));
    profile.forwardSecondsPerTensor.push_back(jsonNumber(entry, "forward_seconds", where));
  }
  return profile;
}

ComputeProfile readCsv(const std::string& path) {
  std::ifstream file = openTableFile(path, "compute profile");
  const CsvTable table(file, path, {"name", "bytes", "backward_seconds", "forward_seconds"},
                       "tensors");
  ComputeProfile profile;
  // "# key: value" lines above the header carry the profile's scalars.
  for (const CsvTable::Comment& comment : table.leadingComments()) {
    const size_t colon = comment.text.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = trimmed(std::string_view(comment.text).substr(0, colon));
    const std::string value = trimmed(std::string_view(comment.text).substr(colon + 1));
    const std::string where = table.where(comment.line);
    if (key == "model") profile.model = value;
    if (key == "batch_per_worker") {
      profile.batchPerWorker = static_cast<int64_t>(parseWholeNumber(value, where, key));
    }
    if (key == "optimizer_seconds") profile.optimizerSeconds = parseNumber(value, where, key);
    if (key == "other_seconds") profile.otherSeconds = parseNumber(value, where, key);
  }
  for (const CsvTable::Row& row : table.rows()) {
    TensorInfo tensor;
    tensor.name = table.text(row, "name");
    IMERGE_CHECK(!tensor.name.empty(), table.where(row.line), ": field 'name' is empty");
    tensor.bytes = static_cast<size_t>(table.wholeNumber(row, "bytes", 0));
    tensor.backwardSeconds = table.number(row, "backward_seconds");
    profile.forwardSecondsPerTensor.push_back(table.number(row, "forward_seconds"));
    profile.tensors.push_back(std::move(tensor));
  }
  return profile;
}

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

double ComputeProfile::forwardSeconds() const {
  double total = 0;
  for (double seconds : forwardSecondsPerTensor) total += seconds;
  return total;
}

double ComputeProfile::backwardSeconds() const {
  const std::vector<double> ready = readyTimes(tensors);
  return ready.empty() ? 0 : ready.back();
}

std::vector<double> splitForwardByBackward(const std::vector<TensorInfo>& tensors,
                                           double forwardSeconds) {
  double backward = 0;
  for (const TensorInfo& tensor : tensors) backward += tensor.backwardSeconds;
  std::vector<double> split(tensors.size(), 0.0);
  for (size_t k = 0; k < tensors.size(); ++k) {
    split[k] = backward > 0 ? forwardSeconds * tensors[k].backwardSeconds / backward
                            : forwardSeconds / static_cast<double>(tensors.size());
  }
  return split;
}

void validateComputeProfile(const ComputeProfile& profile, const std::string& source) {
  IMERGE_CHECK(!profile.tensors.empty(), source, ": the compute profile has no tensors");
  IMERGE_CHECK(profile.forwardSecondsPerTensor.size() == profile.tensors.size(), source, ": ",
               profile.forwardSecondsPerTensor.size(), " forward times for ",
               profile.tensors.size(), " tensors");
  IMERGE_CHECK(std::isfinite(profile.optimizerSeconds) && profile.optimizerSeconds >= 0, source,
               ": optimizer_seconds ", profile.optimizerSeconds, " must be finite, not negative");
  IMERGE_CHECK(std::isfinite(profile.otherSeconds) && profile.otherSeconds >= 0, source,
               ": other_seconds ", profile.otherSeconds, " must be finite, not negative");
  IMERGE_CHECK(profile.batchPerWorker >= 0, source, ": batch_per_worker ", profile.batchPerWorker,
               " is negative");
  std::set<std::string> names;
  for (size_t k = 0; k < profile.tensors.size(); ++k) {
    const TensorInfo& tensor = profile.tensors[k];
    const std::string where = detail::concat(source, ": tensor ", k, " ('", tensor.name, "')");
    IMERGE_CHECK(!tensor.name.empty(), source, ": tensor ", k, " has no name");
    IMERGE_CHECK(names.insert(tensor.name).second, where, " appears twice");
    IMERGE_CHECK(std::isfinite(tensor.backwardSeconds) && tensor.backwardSeconds >= 0, where,
                 ": backward_seconds ", tensor.backwardSeconds, " must be finite, not negative");
    const double forward = profile.forwardSecondsPerTensor[k];
    IMERGE_CHECK(std::isfinite(forward) && forward >= 0, where, ": forward_seconds ", forward,
                 " must be finite, not negative");
  }
}

void writeComputeProfile(const std::string& path, const ComputeProfile& profile) {
  validateComputeProfile(profile, path);
  std::ofstream out(path);
  IMERGE_CHECK(out.is_open(), path, ": cannot write the compute profile");
  out.precision(17);  // every digit needed to read the same doubles back
  if (endsWith(path, ".json")) {
    nlohmann::json tensors = nlohmann::json::array();
    for (size_t k = 0; k < profile.tensors.size(); ++k) {
      tensors.push_back({{"name", profile.tensors[k].name},
                         {"bytes", profile.tensors[k].bytes},
                         {"backward_seconds", profile.tensors[k].backwardSeconds},
                         {"forward_seconds", profile.forwardSecondsPerTensor[k]}});
    }
    out << nlohmann::json{{"model", profile.model},
                          {"batch_per_worker", profile.batchPerWorker},
                          {"optimizer_seconds", profile.optimizerSeconds},
                          {"other_seconds", profile.otherSeconds},
                          {"tensors", std::move(tensors)}}
               .dump(1)
        << "\n";
  } else {
    out << "# model: " << profile.model << "\n# batch_per_worker: " << profile.batchPerWorker
        << "\n# optimizer_seconds: " << profile.optimizerSeconds
        << "\n# other_seconds: " << profile.otherSeconds
        << "\nname,bytes,backward_seconds,forward_seconds\n";
    for (size_t k = 0; k < profile.tensors.size(); ++k) {
      IMERGE_CHECK(profile.tensors[k].name.find(',') == std::string::npos, path, ": tensor name '",
                   profile.tensors[k].name, "' holds a comma; write the profile as .json");
      out << profile.tensors[k].name << "," << profile.tensors[k].bytes << ","
          << profile.tensors[k].backwardSeconds << "," << profile.forwardSecondsPerTensor[k]
          << "\n";
    }
  }
  IMERGE_CHECK(out.good(), path, ": writing the compute profile failed");
}

ComputeProfile readComputeProfile(const std::string& path) {
  ComputeProfile profile = endsWith(path, ".json") ? readJson(path) : readCsv(path);
  validateComputeProfile(profile, path);
  return profile;
}

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
