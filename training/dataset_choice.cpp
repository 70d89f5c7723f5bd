#include "training/dataset_choice.h"

#include <filesystem>

#include "data/cifar10.h"
#include "data/idx_dataset.h"
#include "data/image_folder.h"
#include "data/synthetic.h"

namespace imerge::training {

namespace {
using namespace data;

// Per-channel statistics of each dataset's training images, the usual normalisation constants.
TransformPtr normalizeFor(const std::string& dataset) {
  if (dataset == "fashion-mnist") return normalize({0.2860f}, {0.3530f});
  if (dataset == "mnist") return normalize({0.1307f}, {0.3081f});
  if (dataset == "cifar10") {
    return normalize({0.4914f, 0.4822f, 0.4465f}, {0.2470f, 0.2435f, 0.2616f});
  }
  return normalize({0.485f, 0.456f, 0.406f}, {0.229f, 0.224f, 0.225f});  // ImageNet's
}

// The shorter side an image-folder image is resized to before its crop: 256 for 224,
// torchvision's ratio.
int64_t resizedSide(int64_t imageSize) {
  return imageSize * 8 / 7;
}

DatasetSplits idxSplits(const DatasetChoice& choice) {
  const bool fashion = choice.name == "fashion-mnist";
  const std::string directory =
      !choice.directory.empty() ? choice.directory
                                : (fashion ? kFashionMnistDirectory : "/usr/share/datasets/mnist");
  const TransformPtr normal = evaluationInput(choice.name, choice.imageSize).transform;
  // Digits are not mirror-symmetric; clothes are.
  const TransformPtr train = fashion ? compose({randomHorizontalFlip(), normal}) : normal;
  return {std::make_shared<IdxImageDataset>(choice.name, directory, "train", train),
          std::make_shared<IdxImageDataset>(choice.name, directory, "test", normal), true,
          directory};
}

DatasetSplits cifarSplits(const DatasetChoice& choice) {
  IMERGE_CHECK(!choice.directory.empty(),
               "--dataset cifar10 needs --data-dir: the folder with data_batch_1.bin ... "
               "test_batch.bin (the CIFAR-10 binary version)");
  const TransformPtr normal = evaluationInput(choice.name, choice.imageSize).transform;
  const TransformPtr train = compose({randomCrop(32, 32, 4), randomHorizontalFlip(), normal});
  return {std::make_shared<Cifar10Dataset>(choice.directory, "train", train),
          std::make_shared<Cifar10Dataset>(choice.directory, "test", normal), true,
          choice.directory};
}

DatasetSplits folderSplits(const DatasetChoice& choice) {
  IMERGE_CHECK(!choice.directory.empty(),
               "--dataset imagenet-folder needs --data-dir: a folder with train/ and val/, each "
               "holding one sub-folder of images per class");
  const int64_t size = choice.imageSize;
  const PixelLimit pixelLimit{
      .maxPixels = choice.maxImagePixels > 0 ? choice.maxImagePixels : defaultMaxImagePixels(size),
      .hint = " (--max-image-pixels raises the limit)"};
  ImageFolderOptions train{
      .transform = compose({resizeShorterSide(resizedSide(size)), randomCrop(size, size),
                            randomHorizontalFlip(), normalizeFor(choice.name)}),
      .strict = choice.strict,
      .pixelLimit = pixelLimit};
  ImageFolderOptions val{.transform = evaluationInput(choice.name, size).transform,
                         .strict = choice.strict,
                         .pixelLimit = pixelLimit};
  const std::filesystem::path root(choice.directory);
  return {std::make_shared<ImageFolderDataset>((root / "train").string(), train),
          std::make_shared<ImageFolderDataset>((root / "val").string(), val), size <= 64,
          choice.directory};
}

DatasetSplits syntheticSplits(const DatasetChoice& choice) {
  const Shape shape = evaluationInput(choice.name, choice.imageSize).imageShape;
  const int64_t classes = choice.imageSize <= 64 ? 10 : 1000;
  return {std::make_shared<SyntheticDataset>(50000, shape, classes, choice.seed),
          std::make_shared<SyntheticDataset>(1000, shape, classes, choice.seed + 1),
          choice.imageSize <= 64, "synthetic data (seed " + std::to_string(choice.seed) + ")"};
}
}  // namespace

int64_t defaultMaxImagePixels(int64_t imageSize) {
  const int64_t side = 32 * imageSize;
  return side * side;
}

EvaluationInput evaluationInput(const std::string& dataset, int64_t imageSize) {
  if (dataset == "fashion-mnist" || dataset == "mnist") {
    return {{1, 28, 28}, normalizeFor(dataset)};
  }
  if (dataset == "cifar10") return {{3, 32, 32}, normalizeFor(dataset)};
  if (dataset == "imagenet-folder") {
    return {{3, imageSize, imageSize},
            compose({resizeShorterSide(resizedSide(imageSize)), centerCrop(imageSize, imageSize),
                     normalizeFor(dataset)})};
  }
  if (dataset == "synthetic") return {{3, imageSize, imageSize}, nullptr};
  IMERGE_FAIL("unknown dataset '", dataset, "': expected one of ", datasetNames());
}

std::vector<std::string> fixedClassNames(const std::string& dataset) {
  if (dataset == "fashion-mnist") {
    return {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
            "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};
  }
  if (dataset == "mnist") return {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"};
  if (dataset == "cifar10") {
    return {"airplane", "automobile", "bird",  "cat",  "deer",
            "dog",      "frog",       "horse", "ship", "truck"};
  }
  return {};
}

const char* datasetNames() {
  return "fashion-mnist, mnist, cifar10, imagenet-folder, synthetic";
}

DatasetSplits openDatasets(const DatasetChoice& choice) {
  if (choice.name == "fashion-mnist" || choice.name == "mnist") return idxSplits(choice);
  if (choice.name == "cifar10") return cifarSplits(choice);
  if (choice.name == "imagenet-folder") return folderSplits(choice);
  if (choice.name == "synthetic") return syntheticSplits(choice);
  IMERGE_FAIL("unknown dataset '", choice.name, "': expected one of ", datasetNames());
}

}  // namespace imerge::training
