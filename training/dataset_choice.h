// The datasets imerge-train knows by name, with the transforms each is trained and evaluated
// with (torchvision's customary ones):
//
//   fashion-mnist, mnist  IDX files; train: horizontal flip (Fashion-MNIST only), normalise
//   cifar10               binary batches; train: random crop 32 with padding 4, flip, normalise
//   imagenet-folder       <dir>/train and <dir>/val in ImageNet layout; train: resize the
//                         shorter side to size*8/7, random crop, flip, normalise; val: centre crop
//   synthetic             random images of --image-size, for benchmarks (no files)
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "data/transforms.h"

namespace imerge::training {

struct DatasetChoice {
  std::string name = "fashion-mnist";
  std::string directory;    // empty: the dataset's usual place (Fashion-MNIST's Debian path)
  int64_t imageSize = 224;  // imagenet-folder and synthetic
  bool strict = false;      // imagenet-folder: a bad image is an error, not a skip
  // imagenet-folder: the most pixels an image's header may declare; 0 is defaultMaxImagePixels.
  int64_t maxImagePixels = 0;
  uint64_t seed = 0;  // synthetic
};

struct DatasetSplits {
  std::shared_ptr<const data::Dataset> train;
  std::shared_ptr<const data::Dataset> test;
  // The data's images are small (CIFAR/Fashion-MNIST sizes): models use their small stems.
  bool smallImages = false;
  // Where the data came from, for messages: the folder read, or "synthetic data (seed S)".
  std::string source;
};

// The pixel limit of an image folder's images at this --image-size: (32 x image size)^2, 51
// megapixels at 224, so a photograph many times the training size decodes while a small file
// whose header claims 20000 x 20000 (6 GB to decode) is skipped.
int64_t defaultMaxImagePixels(int64_t imageSize);

// How a dataset's test images are prepared: the shape the model takes ([C, H, W]; C is the
// channels an image file is decoded to) and the test split's transform (null: none), so that
// imerge-predict prepares a user's images exactly as evaluation prepares the test split's.
struct EvaluationInput {
  Shape imageShape;
  data::TransformPtr transform;
};
EvaluationInput evaluationInput(const std::string& dataset, int64_t imageSize);

// The class names, by label, of a dataset whose classes are fixed (Fashion-MNIST, MNIST,
// CIFAR-10); empty for the others (an image folder's names are its sub-folders').
std::vector<std::string> fixedClassNames(const std::string& dataset);

// Opens both splits; errors name the dataset, folder or file at fault.
DatasetSplits openDatasets(const DatasetChoice& choice);

// "fashion-mnist, mnist, cifar10, imagenet-folder, synthetic"
const char* datasetNames();

}  // namespace imerge::training
