// imerge-predict: a trained checkpoint's top classes for images, as Darknet's `classify` or a
// few lines of PyTorch would give them. Everything the images need comes from the checkpoint
// that imerge-train wrote: the model, the dataset it was trained on (its test-split
// preprocessing, its class names) and the image size, so a user never repeats them.
//
//   imerge-predict --checkpoint ck/last.ckpt shoe.png more-images/ --top 3
//   shoe.png: 1. Ankle boot (9) 97.12%; 2. Sneaker (7) 2.31%; 3. Sandal (5) 0.41%
//
// Folders are searched recursively for .png, .jpg and .jpeg files, in sorted order. An image of
// another size than the model's is resized to it first (for an image-folder model, the test
// split's resize and centre crop do that).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <numeric>
#include <string>
#include <vector>

#include "apps/flag_checks.h"
#include "apps/run_metadata.h"
#include "autograd/grad_mode.h"
#include "core/device.h"
#include "core/error.h"
#include "data/image_file.h"
#include "data/transforms.h"
#include "io/checkpoint.h"
#include "models/registry.h"
#include "training/dataset_choice.h"

namespace {

using namespace imerge;
namespace fs = std::filesystem;

struct Options {
  std::string checkpoint;
  std::vector<std::string> inputs;  // image files and folders
  int top = 5;
  int batchSize = 64;
  int threads = 0;
};

// What imerge-predict takes from the checkpoint: how to build the model and prepare images.
struct Trained {
  std::string model;
  std::string dataset;
  models::ModelConfig config;
  training::EvaluationInput input;
  std::vector<std::string> classNames;  // by label
};

Trained readTrained(const std::string& path) {
  using namespace apps::run_keys;
  const io::TrainingState state = io::inspectCheckpoint(path).state;
  const apps::RecordedRun recorded("--checkpoint: " + path, state.metadata);
  Trained trained;
  trained.model = state.modelName;
  trained.dataset = recorded.text(kDataset);
  trained.input = training::evaluationInput(trained.dataset, recorded.wholeNumber(kImageSize, 1));
  trained.config = {.inChannels = trained.input.imageShape[0],
                    .classes = recorded.wholeNumber(kClasses, 1),
                    .smallImages = recorded.text(kSmallImages) == "1"};
  trained.classNames = training::fixedClassNames(trained.dataset);
  if (const std::string* names = recorded.find(kClassNames)) {
    trained.classNames = apps::splitLines(*names);
  }
  if (static_cast<int64_t>(trained.classNames.size()) != trained.config.classes) {
    trained.classNames.clear();  // synthetic data, or names that do not fit: numbers only
    for (int64_t label = 0; label < trained.config.classes; ++label) {
      trained.classNames.push_back("class " + std::to_string(label));
    }
  }
  return trained;
}

// The image files named or found under the folders named, in the order given (a folder's
// files sorted by path).
std::vector<std::string> imageFiles(const std::vector<std::string>& inputs) {
  std::vector<std::string> files;
  for (const std::string& input : inputs) {
    std::error_code error;
    if (fs::is_directory(input, error)) {
      std::vector<std::string> found;
      for (const auto& entry : fs::recursive_directory_iterator(
               input, fs::directory_options::follow_directory_symlink)) {
        if (entry.is_regular_file() && data::isImageFile(entry.path())) {
          found.push_back(entry.path().string());
        }
      }
      IMERGE_CHECK(!found.empty(), "folder ", input, " holds no .png, .jpg or .jpeg files");
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else {
      IMERGE_CHECK(fs::exists(input, error), "image ", input, " does not exist");
      files.push_back(input);
    }
  }
  return files;
}

// The image as the model takes it: decoded to the model's channels and through the test
// split's transform. An image-folder model's transform resizes and crops any image; for the
// others (whose data has one size) an image of another size is resized to it first.
Tensor prepare(const std::string& file, const Trained& trained) {
  const Shape& shape = trained.input.imageShape;  // [C, H, W]
  Tensor image = data::decodeImageFile(file, static_cast<int>(shape[0]), {});
  Generator unused(0);  // test transforms draw no random numbers
  if (trained.dataset != "imagenet-folder" &&
      (image.dim(1) != shape[1] || image.dim(2) != shape[2])) {
    image = data::applyTransform(data::resize(shape[1], shape[2]), image, unused);
  }
  if (trained.input.transform) image = data::applyTransform(trained.input.transform, image, unused);
  IMERGE_CHECK(image.shape() == shape, "image ", file, " becomes ", shapeToString(image.shape()),
               " after the test split's preprocessing, but the model takes ", shapeToString(shape));
  return image;
}

// "1. Ankle boot (9) 97.12%; 2. Sneaker (7) 2.31%" from one row of logits.
std::string topClasses(const float* logits, int64_t classes, int top,
                       const std::vector<std::string>& names) {
  // Softmax, shifted by the largest logit so that exp never overflows.
  const float largest = *std::max_element(logits, logits + classes);
  std::vector<double> probabilities(static_cast<size_t>(classes));
  double sum = 0;
  for (int64_t c = 0; c < classes; ++c) sum += probabilities[c] = std::exp(logits[c] - largest);
  std::vector<int64_t> order(static_cast<size_t>(classes));
  std::iota(order.begin(), order.end(), 0);
  const auto shown = std::min<int64_t>(top, classes);
  // Ties go to the lower label, as argmax and the accuracy in training do.
  std::partial_sort(order.begin(), order.begin() + shown, order.end(), [&](int64_t a, int64_t b) {
    return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
  });
  std::string text;
  for (int64_t i = 0; i < shown; ++i) {
    const int64_t label = order[static_cast<size_t>(i)];
    char line[64];
    std::snprintf(line, sizeof line, " (%lld) %.2f%%", static_cast<long long>(label),
                  100.0 * probabilities[static_cast<size_t>(label)] / sum);
    text +=
        (i ? "; " : "") + std::to_string(i + 1) + ". " + names[static_cast<size_t>(label)] + line;
  }
  return text;
}

int run(const Options& options) {
  setNumThreads(options.threads > 0 ? options.threads : apps::availableCores());
  const Trained trained = readTrained(options.checkpoint);
  auto model = models::buildModel(trained.model, trained.config);
  io::loadCheckpoint(options.checkpoint, trained.model, *model, nullptr);
  model->eval();
  autograd::NoGradGuard noGrad;
  std::cerr << "imerge-predict: " << trained.model << " trained on " << trained.dataset << " ("
            << shapeToString(trained.input.imageShape) << ", " << trained.config.classes
            << " classes) from " << options.checkpoint << "\n";

  const std::vector<std::string> files = imageFiles(options.inputs);
  const Shape& shape = trained.input.imageShape;
  const int64_t imageElements = shapeNumel(shape);
  for (size_t first = 0; first < files.size(); first += static_cast<size_t>(options.batchSize)) {
    const size_t count = std::min(files.size() - first, static_cast<size_t>(options.batchSize));
    Shape batchShape{static_cast<int64_t>(count)};
    batchShape.insert(batchShape.end(), shape.begin(), shape.end());
    Tensor batch = Tensor::empty(batchShape);  // [B, C, H, W]
    for (size_t i = 0; i < count; ++i) {
      const Tensor image = prepare(files[first + i], trained);
      std::memcpy(batch.data<float>() + static_cast<int64_t>(i) * imageElements,
                  image.data<float>(), sizeof(float) * static_cast<size_t>(imageElements));
    }
    const Tensor logits = model->forward(autograd::Variable(batch)).tensor();
    const int64_t classes = logits.dim(1);
    for (size_t i = 0; i < count; ++i) {
      std::cout << files[first + i] << ": "
                << topClasses(logits.data<float>() + static_cast<int64_t>(i) * classes, classes,
                              options.top, trained.classNames)
                << "\n";
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  CLI::App app{"imerge-predict: a checkpoint's top classes for images"};
  app.add_option("--checkpoint", options.checkpoint, "a checkpoint written by imerge-train")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("inputs", options.inputs, "image files (.png, .jpg, .jpeg) and folders of them")
      ->required();
  app.add_option("--top", options.top, "classes shown per image, most probable first")
      ->check(apps::wholeNumber(1, 1000))
      ->capture_default_str();
  app.add_option("--batch-size", options.batchSize, "images per forward pass")
      ->check(apps::wholeNumber(1, 4096))
      ->capture_default_str();
  app.add_option("--threads", options.threads, "CPU threads (0: all cores)")
      ->check(apps::threadCount())
      ->capture_default_str();
  IMERGE_PARSE_FLAGS(app, argc, argv);
  try {
    return run(options);
  } catch (const std::exception& error) {
    std::cerr << "imerge-predict: error: " << error.what() << "\n";
    return 1;
  }
}
