// Image folders in ImageNet layout as a Dataset: root/<class>/<...>/<file>.{jpg,jpeg,png},
// decoded with stb_image (as torchvision's ImageFolder, which this follows: classes are the
// sub-folders of root sorted by name and numbered from 0, files are found recursively and
// sorted by path, other extensions are ignored).
//
// Bad files. Every file's header is checked when the dataset is built (one small read per
// file); a file whose header does not decode is skipped with a warning naming it. A file that
// passes the header check but fails to decode later (a truncated JPEG) is reported in get() the
// same way and replaced by the next decodable example, so a batch keeps its size and the
// replacement depends only on the index. skippedExamples() counts both kinds; the DataLoader
// reports the count at the end of each epoch. In strict mode (`--strict-data`) either kind is
// an imerge::Error naming the file instead.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "data/image_file.h"
#include "data/transforms.h"

namespace imerge::data {

struct ImageFolderOptions {
  int channels = 3;  // 3: RGB (greyscale is replicated, alpha dropped); 1: greyscale (luma)
  // Batching needs one size: give a resize or crop unless every image already has one size.
  TransformPtr transform = nullptr;
  bool strict = false;  // a bad image is an error instead of a warning and a skip
  // An image whose header declares more pixels is bad, before anything is allocated for it: a
  // 2 KB file claiming 20000 x 20000 would otherwise take 6 GB to decode.
  PixelLimit pixelLimit;
  // Where warnings go, one line each; standard error when empty. Called from worker threads,
  // never two at once.
  std::function<void(const std::string&)> warn = {};
};

class ImageFolderDataset final : public Dataset {
 public:
  // Limits checked before anything is allocated for an image: its file's size
  // (kMaxImageFileBytes) and the pixels its header declares (ImageFolderOptions::pixelLimit;
  // data/image_file.h). An image over either is bad: skipped with a warning at the scan, or
  // refused in strict mode.
  ImageFolderDataset(const std::string& root, ImageFolderOptions options = {});

  int64_t size() const override { return static_cast<int64_t>(files_.size()); }
  Example get(int64_t index, Generator& generator) const override;
  // [channels, H, W] after the transform; H and W are those of the first image unless the
  // transform fixes them (the size check for a batch is the DataLoader's).
  Shape imageShape() const override;
  int64_t classes() const override { return static_cast<int64_t>(classNames_.size()); }
  std::string describe() const override;
  int64_t skippedExamples() const override;

  const std::vector<std::string>& classNames() const { return classNames_; }  // by label
  const std::string& path(int64_t index) const { return files_[static_cast<size_t>(index)]; }
  int64_t label(int64_t index) const { return labels_[static_cast<size_t>(index)]; }
  // The files skipped so far, for a summary.
  std::vector<std::string> skippedFiles() const;

 private:
  // The decoded, untransformed image [channels, H, W] in [0, 1]; throws naming the file.
  Tensor decode(int64_t index) const;
  void reportBad(const std::string& file, const std::string& reason) const;

  std::string root_;
  ImageFolderOptions options_;
  std::vector<std::string> classNames_;
  std::vector<std::string> files_;  // by index, grouped by class, sorted
  std::vector<int64_t> labels_;
  Shape firstShape_;  // [channels, H, W] of the first image, from its header

  mutable std::mutex badMutex_;
  mutable std::set<std::string> badFiles_;  // skipped at build time or in get()
};

}  // namespace imerge::data
