// The model zoo against torchvision: parameter counts, gradient tensor counts, parameter names
// and shapes in order, output shapes, and logits on the same weights and inputs.
//
// Counts and name signatures come from tests/reference/model_zoo.json, written by
// `/usr/bin/python3 tests/reference/torch_models.py --counts`. The logits tests write the
// imerge model's weights and an input batch to a temporary file, run the same script on it
// (torchvision's model, or the script's own definition for the variants torchvision lacks) and
// compare its eval-mode logits with imerge's. They need Debian's python3-torch and
// python3-torchvision; without them they fail and say how to install them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "autograd/grad_mode.h"
#include "layers/layers.h"
#include "models/registry.h"
#include "models/torchvision_init.h"
#include "support/compare.h"
#include "support/error_text.h"
#include "support/gradcheck.h"
#include "support/reference_data.h"
#include "support/source_tree.h"

namespace imerge::models {
namespace {

using autograd::Variable;
namespace fs = std::filesystem;

// ---- reference data -------------------------------------------------------------------------

struct ZooEntry {
  std::string model;
  ModelConfig config;
  int64_t parameters = 0;
  size_t gradientTensors = 0;
  std::string signature;  // FNV-1a 64 of "name:d0xd1;..." over the parameters in order
};

const std::vector<ZooEntry>& zooEntries() {
  static const std::vector<ZooEntry> entries = [] {
    const std::string path = (testing::referenceDir() / "model_zoo.json").string();
    std::ifstream in(path);
    IMERGE_CHECK(in.good(), "cannot open ", path,
                 "; regenerate it with /usr/bin/python3 tests/reference/torch_models.py --counts");
    const auto json = nlohmann::json::parse(in);
    std::vector<ZooEntry> out;
    for (const auto& item : json.at("models")) {
      ZooEntry entry;
      entry.model = item.at("model").get<std::string>();
      entry.config.inChannels = item.at("in_channels").get<int64_t>();
      entry.config.classes = item.at("classes").get<int64_t>();
      entry.config.smallImages = item.at("small_images").get<bool>();
      entry.parameters = item.at("parameters").get<int64_t>();
      entry.gradientTensors = item.at("gradient_tensors").get<size_t>();
      entry.signature = item.at("signature_fnv1a64").get<std::string>();
      out.push_back(entry);
    }
    return out;
  }();
  return entries;
}

// The same hash as torch_models.py's signature(): catches a renamed, reordered or reshaped
// parameter even when the counts agree.
std::string parameterSignature(const layers::Module& module) {
  std::string text;
  for (const auto& [name, variable] : module.namedParameters()) {
    text += name + ":";
    const Shape& shape = variable.shape();
    for (size_t i = 0; i < shape.size(); ++i) {
      if (i > 0) text += "x";
      text += std::to_string(shape[i]);
    }
    text += ";";
  }
  uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char byte : text) hash = (hash ^ byte) * 0x100000001b3ull;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  return hex;
}

// Spatial size for the shape checks: as small as each stem allows, to keep the suite fast.
int64_t shapeTestSize(const ZooEntry& entry) {
  if (entry.config.smallImages) return entry.config.inChannels == 1 ? 28 : 32;
  return entry.model == "alexnet" ? 64 : 32;  // AlexNet's ImageNet stem needs >= 63x63
}

Tensor forwardNoGrad(layers::Module& model, const Tensor& input) {
  autograd::NoGradGuard noGrad;
  model.eval();
  return model(Variable(input)).tensor();
}

// ---- counts, names and shapes ---------------------------------------------------------------

// torchvision's counts at 224x224, 3 channels and 1000 classes, copied from the project's
// ../shared/reference/model_tensors.csv (which is not part of the repository).
struct TorchvisionRow {
  const char* model;
  int64_t parameters;
  size_t gradientTensors;
};
constexpr TorchvisionRow kTorchvisionTable[] = {{"alexnet", 61100840, 16},
                                                {"vgg16", 138357544, 32},
                                                {"resnet18", 11689512, 62},
                                                {"resnet50", 25557032, 161}};

const TorchvisionRow* torchvisionRow(const ZooEntry& entry) {
  const ModelConfig& c = entry.config;
  if (c.inChannels != 3 || c.classes != 1000 || c.smallImages) return nullptr;
  for (const auto& row : kTorchvisionTable) {
    if (entry.model == row.model) return &row;
  }
  return nullptr;
}

TEST(ModelZoo, ReferenceFileCoversEveryRegisteredModelAndTheTorchvisionTable) {
  for (const auto& name : modelNames()) {
    bool found = false;
    for (const auto& entry : zooEntries()) found = found || entry.model == name;
    EXPECT_TRUE(found) << name << " has no entry in model_zoo.json; rerun torch_models.py --counts";
  }
  EXPECT_EQ(modelNames().size(), 20u);  // alexnet, 8 VGGs, 5 + 5 ResNets, small_cnn
  int tableRows = 0;
  for (const auto& entry : zooEntries()) {
    if (const TorchvisionRow* row = torchvisionRow(entry)) {
      ++tableRows;
      EXPECT_EQ(entry.parameters, row->parameters) << entry.model;
      EXPECT_EQ(entry.gradientTensors, row->gradientTensors) << entry.model;
    }
  }
  EXPECT_EQ(tableRows, 4);
}

// One registered model in one configuration of the reference file: the counts and the ordered
// names and shapes equal PyTorch's (and model_tensors.csv's where it has the model), and a
// batch of 2 gives [2, classes].
class EveryModel : public ::testing::TestWithParam<ZooEntry> {};

TEST_P(EveryModel, MatchesPyTorchDefinitionAndShapes) {
  const ZooEntry& entry = GetParam();
  Generator generator(2);
  auto model = buildModel(entry.model, entry.config, generator);
  EXPECT_EQ(model->parameterCount(), entry.parameters);
  EXPECT_EQ(model->parameters().size(), entry.gradientTensors);
  EXPECT_EQ(parameterSignature(*model), entry.signature) << "parameter names or shapes differ";
  if (const TorchvisionRow* row = torchvisionRow(entry)) {
    EXPECT_EQ(model->parameterCount(), row->parameters) << "model_tensors.csv";
    EXPECT_EQ(model->parameters().size(), row->gradientTensors) << "model_tensors.csv";
  }

  const int64_t size = shapeTestSize(entry);
  Tensor input = testing::randomTensor({2, entry.config.inChannels, size, size}, 3);
  Tensor logits = forwardNoGrad(*model, input);
  EXPECT_EQ(logits.shape(), (Shape{2, entry.config.classes})) << "input " << size << "x" << size;
}

INSTANTIATE_TEST_SUITE_P(ModelZoo, EveryModel, ::testing::ValuesIn(zooEntries()),
                         [](const ::testing::TestParamInfo<ZooEntry>& info) {
                           const ZooEntry& e = info.param;
                           return detail::concat(e.model, e.config.smallImages ? "_small" : "",
                                                 "_in", e.config.inChannels, "_classes",
                                                 e.config.classes);
                         });

// The small-image variants at CIFAR's shape too (the reference entries use 1-channel 28x28).
TEST(ModelZoo, SmallImageVariantsTakeCifarImages) {
  for (const char* name : {"alexnet", "vgg11_bn", "resnet18", "resnet20"}) {
    SCOPED_TRACE(name);
    Generator generator(4);
    auto model = buildModel(name, ModelConfig{3, 10, true}, generator);
    Tensor logits = forwardNoGrad(*model, testing::randomTensor({2, 3, 32, 32}, 5));
    EXPECT_EQ(logits.shape(), (Shape{2, 10}));
  }
}

TEST(ModelZoo, ParameterNamesFollowTorchvision) {
  Generator generator(6);
  auto resnet = buildModel("resnet18", ModelConfig{}, generator);
  auto names = resnet->namedParameters();
  EXPECT_EQ(names.front().first, "conv1.weight");
  EXPECT_EQ(names[3].first, "layer1.0.conv1.weight");
  EXPECT_EQ(names.back().first, "fc.bias");
  bool hasDownsample = false;
  for (const auto& [name, variable] : names) {
    hasDownsample = hasDownsample || name == "layer2.0.downsample.0.weight";
  }
  EXPECT_TRUE(hasDownsample);

  auto alexnet = buildModel("alexnet", ModelConfig{}, generator);
  EXPECT_EQ(alexnet->namedParameters().front().first, "features.0.weight");
  EXPECT_EQ(alexnet->namedParameters().back().first, "classifier.6.bias");
}

// torchvision's initialisation: convolutions kaiming_normal(fan_out), batch-norm 1 and 0. Every
// convolution is checked, by name, and the test counts them: ResNet-20 has 19 (the stem and
// two in each of the 9 basic blocks; its 1x1 shortcuts are option A, parameter-free) and 19
// batch-norms.
TEST(ModelZoo, ConvolutionsStartKaimingNormalFanOut) {
  Generator generator(7);
  auto model = buildModel("resnet20", ModelConfig{3, 10, true}, generator);
  int convolutions = 0, batchNormWeights = 0, batchNormBiases = 0;
  for (const auto& [name, variable] : model->namedParameters()) {
    const std::vector<float> values = variable.tensor().toVector();
    if (name.find("conv") != std::string::npos && name.ends_with(".weight")) {
      ASSERT_EQ(variable.tensor().shape().size(), 4u) << name;
      const Shape& shape = variable.tensor().shape();  // [C_out, C_in, kH, kW]
      const double fanOut = static_cast<double>(shape[0] * shape[2] * shape[3]);
      double sumSquares = 0.0;
      for (float value : values) sumSquares += double(value) * value;
      const double stddev = std::sqrt(sumSquares / static_cast<double>(values.size()));
      // The sample's standard deviation is within 10% of sqrt(2 / fan_out): about 3 standard
      // errors for the smallest, the 3->16 stem's 432 values. fan_in is off by sqrt(C_out / C_in)
      // (5x for the stem, 1.4x where a stage widens).
      EXPECT_NEAR(stddev, std::sqrt(2.0 / fanOut), 0.1 * std::sqrt(2.0 / fanOut)) << name;
      ++convolutions;
    } else if (name.find("bn") != std::string::npos && name.ends_with(".weight")) {
      EXPECT_EQ(values, std::vector<float>(values.size(), 1.0f)) << name;
      ++batchNormWeights;
    } else if (name.find("bn") != std::string::npos && name.ends_with(".bias")) {
      EXPECT_EQ(values, std::vector<float>(values.size(), 0.0f)) << name;
      ++batchNormBiases;
    }
  }
  EXPECT_EQ(convolutions, 19);
  EXPECT_EQ(batchNormWeights, 19);
  EXPECT_EQ(batchNormBiases, 19);
}

// ---- bad input ------------------------------------------------------------------------------

TEST(ModelZoo, UnknownModelListsKnownNames) {
  const std::string message = testing::errorMessage([] { buildModel("resnet19", ModelConfig{}); });
  testing::expectContains(message, "unknown model 'resnet19'");
  for (const auto& name : modelNames()) testing::expectContains(message, name);
}

TEST(ModelZoo, NonPositiveChannelsOrClassesAreErrors) {
  testing::expectContains(testing::errorMessage([] {
                            buildModel("resnet18", ModelConfig{0, 10, false});
                          }),
                          "positive input channels and classes");
  testing::expectContains(testing::errorMessage([] {
                            buildModel("vgg11", ModelConfig{3, 0, true});
                          }),
                          "positive input channels and classes");
}

// ---- logits against PyTorch -----------------------------------------------------------------

// torch_models.py's tensor file: b"IMTS", uint32 count, then per tensor a kind byte, uint32
// name length, name, uint32 ndim, int64 sizes, float32 data (little-endian, as this machine).
struct NamedTensor {
  char kind;
  std::string name;
  Tensor tensor;
};

void writeTensorFile(const fs::path& path, const std::vector<NamedTensor>& tensors) {
  std::ofstream out(path, std::ios::binary);
  auto put = [&out](const auto& value) {
    out.write(reinterpret_cast<const char*>(&value), sizeof value);
  };
  out.write("IMTS", 4);
  put(static_cast<uint32_t>(tensors.size()));
  for (const auto& [kind, name, tensor] : tensors) {
    put(kind);
    put(static_cast<uint32_t>(name.size()));
    out.write(name.data(), static_cast<std::streamsize>(name.size()));
    put(static_cast<uint32_t>(tensor.ndim()));
    for (int64_t size : tensor.shape()) put(size);
    out.write(static_cast<const char*>(tensor.rawData()),
              static_cast<std::streamsize>(tensor.bytes()));
  }
  IMERGE_CHECK(out.good(), "cannot write ", path.string());
}

Tensor readSingleTensor(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  IMERGE_CHECK(in.good(), "cannot open ", path.string());
  auto get = [&in](auto& value) { in.read(reinterpret_cast<char*>(&value), sizeof value); };
  char magic[4];
  in.read(magic, 4);
  IMERGE_CHECK(std::string(magic, 4) == "IMTS", path.string(), " is not an IMTS tensor file");
  uint32_t count = 0, nameLength = 0, ndim = 0;
  char kind = 0;
  get(count);
  IMERGE_CHECK(count == 1, path.string(), " holds ", count, " tensors, expected 1");
  get(kind);
  get(nameLength);
  std::string name(nameLength, '\0');
  in.read(name.data(), nameLength);
  get(ndim);
  Shape shape(ndim);
  for (auto& size : shape) get(size);
  Tensor tensor = Tensor::empty(shape);
  in.read(static_cast<char*>(tensor.rawData()), static_cast<std::streamsize>(tensor.bytes()));
  IMERGE_CHECK(in.good(), path.string(), " ends early");
  return tensor;
}

// Batch-norm layers start as the identity (weight 1, bias 0, mean 0, variance 1); random values
// make the comparison exercise every term of the eval-mode formula.
void randomizeBatchNorms(layers::Module& model, Generator& generator) {
  internal::forEachModule(model, [&](layers::Module& module) {
    auto* bn = dynamic_cast<layers::BatchNorm2d*>(&module);
    if (bn == nullptr) return;
    generator.fillUniform(bn->weight().tensor(), 0.5f, 1.5f);
    generator.fillUniform(bn->bias().tensor(), -0.2f, 0.2f);
    generator.fillUniform(bn->runningMean(), -0.2f, 0.2f);
    generator.fillUniform(bn->runningVar(), 0.5f, 1.5f);
  });
}

struct LogitsCase {
  std::string model;
  ModelConfig config;
  int64_t size;  // input height and width; the batch is 2
};

std::string describeCase(const LogitsCase& c) {
  return detail::concat(c.model, c.config.smallImages ? " small images " : " ImageNet stem ",
                        c.config.inChannels, "x", c.size, "x", c.size, " -> ", c.config.classes);
}

// All cases go through one run of the script, because starting Python and importing torch
// costs ~3 s, more than most cases' own work.
void expectLogitsEqualPyTorch(const std::vector<LogitsCase>& cases) {
  const fs::path dir = fs::temp_directory_path() / detail::concat("imerge_model_zoo_", ::getpid());
  fs::create_directories(dir);
  std::vector<Tensor> logits;
  nlohmann::json manifest = nlohmann::json::array();
  for (size_t i = 0; i < cases.size(); ++i) {
    const LogitsCase& c = cases[i];
    Generator generator(11 + i);
    auto model = buildModel(c.model, c.config, generator);
    randomizeBatchNorms(*model, generator);
    Tensor input = testing::randomTensor({2, c.config.inChannels, c.size, c.size}, 12 + i);
    logits.push_back(forwardNoGrad(*model, input));

    std::vector<NamedTensor> tensors{{'i', "input", input}};
    for (const auto& [name, variable] : model->namedParameters()) {
      tensors.push_back({'p', name, variable.tensor()});
    }
    for (const auto& [name, tensor] : model->namedBuffers()) {
      // num_batches_tracked (int64) does not enter the eval-mode forward.
      if (tensor.dtype() == DType::Float32) tensors.push_back({'b', name, tensor});
    }
    const fs::path weights = dir / detail::concat("weights_", i, ".bin");
    writeTensorFile(weights, tensors);
    manifest.push_back({{"weights", weights.string()},
                        {"model", c.model},
                        {"out", (dir / detail::concat("logits_", i, ".bin")).string()},
                        {"in_channels", c.config.inChannels},
                        {"classes", c.config.classes},
                        {"small", c.config.smallImages}});
  }
  const fs::path manifestPath = dir / "manifest.json", log = dir / "log.txt";
  std::ofstream(manifestPath) << manifest.dump(1);

  const std::string command =
      detail::concat("/usr/bin/python3 ", testing::referenceDir().string(), "/torch_models.py --batch ",
                     manifestPath.string(), " > ", log.string(), " 2>&1");
  const int status = std::system(command.c_str());
  std::stringstream scriptOutput;
  scriptOutput << std::ifstream(log).rdbuf();
  std::vector<Tensor> expected;
  if (status == 0) {
    for (const auto& entry : manifest) expected.push_back(readSingleTensor(entry["out"]));
  }
  fs::remove_all(dir);  // the weights are hundreds of MB for VGG: never leave them behind
  ASSERT_EQ(status, 0) << "the PyTorch reference failed (" << command << "):\n"
                       << scriptOutput.str()
                       << "\nThese tests need Debian's PyTorch under /usr/bin/python3: run "
                          "`apt-get install python3-torch python3-torchvision` (as "
                          "scripts/install-deps.sh does).";

  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(describeCase(cases[i]));
    ASSERT_EQ(expected[i].shape(), logits[i].shape());
    float largest = 0.0f;
    for (float value : expected[i].toVector()) largest = std::max(largest, std::abs(value));
    testing::expectAllClose(logits[i], expected[i], 1e-4f, 1e-5f * largest, "logits");
  }
}

// Eval-mode logits on the same weights (batch-norm statistics randomised) and inputs.
TEST(ModelZooLogits, EqualPyTorchOnTheSameWeights) {
  expectLogitsEqualPyTorch({
      {"alexnet", ModelConfig{3, 1000, false}, 64},  // the ImageNet stem needs >= 63x63
      {"vgg11_bn", ModelConfig{3, 1000, false}, 32},
      {"resnet18", ModelConfig{3, 1000, false}, 64},
      {"resnet50", ModelConfig{3, 1000, false}, 64},
      {"resnet20", ModelConfig{3, 10, true}, 32},
      {"resnet18", ModelConfig{1, 10, true}, 28},
      {"alexnet", ModelConfig{3, 10, true}, 28},
      {"vgg16", ModelConfig{1, 10, true}, 28},
  });
}

}  // namespace
}  // namespace imerge::models
