#include "data/idx_dataset.h"

#include <cstring>

#include "data/idx_reader.h"

namespace imerge::data {
namespace {

std::string fileSplit(const std::string& name, const std::string& split) {
  if (split == "train") return "train";
  if (split == "test" || split == "t10k") return "t10k";
  IMERGE_FAIL(name, ": unknown split \"", split, "\"; use \"train\" or \"test\"");
}

}  // namespace

IdxImageDataset::IdxImageDataset(const std::string& name, const std::string& directory,
                                 const std::string& split, TransformPtr transform)
    : name_(name), directory_(directory), split_(split), transform_(std::move(transform)) {
  IMERGE_CHECK(name == "mnist" || name == "fashion-mnist", "unknown IDX dataset \"", name,
               "\"; use \"mnist\" or \"fashion-mnist\"");
  IdxDataset loaded = loadIdxDataset(directory, fileSplit(name, split));
  images_ = std::move(loaded.images);
  labels_ = std::move(loaded.labels);
  IMERGE_CHECK(images_.dim(0) > 0, name, " ", split, " in ", directory, " holds no images");
  const int64_t* labels = labels_.data<int64_t>();
  for (int64_t record = 0; record < labels_.dim(0); ++record) {
    IMERGE_CHECK(labels[record] < kClasses, loaded.labelsPath, ": record ", record, " has label ",
                 labels[record], " but ", name, " labels are 0..", kClasses - 1,
                 "; is the file damaged or from another dataset?");
  }
  transformedShape(transform_, {images_.dim(1), images_.dim(2), images_.dim(3)});  // validates
}

Example IdxImageDataset::get(int64_t index, Generator& generator) const {
  IMERGE_CHECK(index >= 0 && index < size(), describe(), ": index ", index, " out of range [0, ",
               size(), ")");
  const Shape shape = {images_.dim(1), images_.dim(2), images_.dim(3)};
  const int64_t elements = shapeNumel(shape);
  Tensor image = Tensor::empty(shape);  // [1, H, W]
  std::memcpy(image.data<float>(), images_.data<float>() + index * elements,
              sizeof(float) * static_cast<size_t>(elements));
  return {applyTransform(transform_, image, generator), labels_.data<int64_t>()[index]};
}

Shape IdxImageDataset::imageShape() const {
  return transformedShape(transform_, {images_.dim(1), images_.dim(2), images_.dim(3)});
}

std::string IdxImageDataset::describe() const {
  return name_ + " " + split_ + " (" + std::to_string(size()) + " images from " + directory_ +
         (transform_ ? ", " + transform_->describe() : std::string()) + ")";
}

}  // namespace imerge::data
