// MNIST and Fashion-MNIST as a Dataset: the IDX reader's images held in memory, with optional
// per-example transforms.
#pragma once

#include <string>

#include "data/dataset.h"
#include "data/transforms.h"

namespace imerge::data {

// Where `apt-get install dataset-fashion-mnist` puts Fashion-MNIST.
inline constexpr const char* kFashionMnistDirectory = "/usr/share/datasets/fashion-mnist";

class IdxImageDataset final : public Dataset {
 public:
  // MNIST and Fashion-MNIST both have 10 classes. Every label is checked against this when the
  // dataset opens: taking the largest label + 1 instead would let one bad label silently train
  // a model of another shape.
  static constexpr int64_t kClasses = 10;

  // name: "mnist" or "fashion-mnist" (the file format is the same; the name is for messages).
  // split: "train" or "test" (the files' own name for it, "t10k", is accepted too); reads
  // <directory>/<train|t10k>-{images-idx3,labels-idx1}-ubyte[.gz].
  IdxImageDataset(const std::string& name, const std::string& directory, const std::string& split,
                  TransformPtr transform = nullptr);

  int64_t size() const override { return images_.dim(0); }
  Example get(int64_t index, Generator& generator) const override;
  Shape imageShape() const override;  // [1, 28, 28] before transforms
  int64_t classes() const override { return kClasses; }
  std::string describe() const override;

  const Tensor& images() const { return images_; }  // float32 [N, 1, H, W] in [0, 1]
  const Tensor& labels() const { return labels_; }  // int64 [N]

 private:
  std::string name_;
  std::string directory_;
  std::string split_;
  TransformPtr transform_;
  Tensor images_;
  Tensor labels_;
};

}  // namespace imerge::data
