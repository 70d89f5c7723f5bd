#include "training/dataset_choice.h"

#include <filesystem>

#include "data/cifar10.h"
#include "data/idx_dataset.h"
#include "data/image_folder.h"
#include "data/synthetic.h"
#include "data/transforms.h"

namespace imerge::training {

namespace {
using namespace data;

// Per-channel statistics of the training images, the usual normalisation constants.
const std::vector<float> kImagenetMean{0.485f, 0.456f, 0.406f};
const std::vector<float> kImagenetStd{0.229f, 0.224f, 0.225f};

DatasetSplits idxSplits(const DatasetChoice& choice) {
  const bool fashion = choice.name == "fashion-mnist";
  const std::string directory =
      !choice.directory.empty() ? choice.directory
                                : (fashion ? kFashionMnistDirectory : "/usr/share/datasets/mnist");
  const TransformPtr normal =
      fashion ? normalize({0.2860f}, {0.3530f}) : normalize({0.1307f}, {0.3081f});
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
  const TransformPtr normal = normalize({0.4914f, 0.4822f, 0.4465f}, {0.2470f, 0.2435f, 0.2616f});
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
  const int64_t resized = size * 8 / 7;  // 256 for 224, torchvision's ratio
  const TransformPtr normal = normalize(kImagenetMean, kImagenetStd);
  const int64_t maxPixels =
      choice.maxImagePixels > 0 ? choice.maxImagePixels : defaultMaxImagePixels(size);
  const std::string hint = " (--max-image-pixels raises the limit)";
  ImageFolderOptions train{.transform = compose({resizeShorterSide(resized), randomCrop(size, size),
                                                 randomHorizontalFlip(), normal}),
                           .strict = choice.strict,
                           .maxPixels = maxPixels,
                           .maxPixelsHint = hint};
  ImageFolderOptions val{
      .transform = compose({resizeShorterSide(resized), centerCrop(size, size), normal}),
      .strict = choice.strict,
      .maxPixels = maxPixels,
      .maxPixelsHint = hint};
  const std::filesystem::path root(choice.directory);
  return {std::make_shared<ImageFolderDataset>((root / "train").string(), train),
          std::make_shared<ImageFolderDataset>((root / "val").string(), val), size <= 64,
          choice.directory};
}

DatasetSplits syntheticSplits(const DatasetChoice& choice) {
  const Shape shape{3, choice.imageSize, choice.imageSize};
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
