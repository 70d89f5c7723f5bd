#include "data/image_folder.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <system_error>

#include "data/image_file.h"

namespace imerge::data {
namespace {

namespace fs = std::filesystem;

constexpr const char* kLayout =
    "; expected ImageNet layout: root/<class>/<image>.{jpg,jpeg,png}, one sub-folder per class";

}  // namespace

ImageFolderDataset::ImageFolderDataset(const std::string& root, ImageFolderOptions options)
    : root_(root), options_(std::move(options)) {
  IMERGE_CHECK(options_.channels == 1 || options_.channels == 3,
               "image folder: channels must be 1 or 3, got ", options_.channels);
  IMERGE_CHECK(options_.pixelLimit.maxPixels > 0,
               "image folder: the pixel limit must be positive, got ",
               options_.pixelLimit.maxPixels);
  std::error_code error;
  IMERGE_CHECK(fs::exists(root_, error), "image folder ", root_, " does not exist", kLayout);
  IMERGE_CHECK(fs::is_directory(root_, error), "image folder ", root_, " is not a directory",
               kLayout);

  std::vector<fs::path> classFolders;
  for (const fs::directory_entry& entry : fs::directory_iterator(root_)) {
    if (entry.is_directory()) classFolders.push_back(entry.path());
  }
  IMERGE_CHECK(!classFolders.empty(), "image folder ", root_, " has no class sub-folders", kLayout);
  // Byte order of the names, as Python's sorted() on str for ASCII names.
  std::sort(classFolders.begin(), classFolders.end(),
            [](const fs::path& a, const fs::path& b) { return a.filename() < b.filename(); });

  int64_t headerFailures = 0;
  for (const fs::path& folder : classFolders) {
    const std::string className = folder.filename().string();
    std::vector<std::string> found;
    for (const fs::directory_entry& entry : fs::recursive_directory_iterator(
             folder, fs::directory_options::follow_directory_symlink)) {
      if (entry.is_regular_file() && isImageFile(entry.path())) {
        found.push_back(entry.path().string());
      }
    }
    IMERGE_CHECK(!found.empty(), "image folder ", root_, ": class folder ", folder.string(),
                 " holds no .jpg, .jpeg or .png files", kLayout);
    std::sort(found.begin(), found.end());
    const auto label = static_cast<int64_t>(classNames_.size());
    int64_t kept = 0;
    for (const std::string& file : found) {
      int width = 0, height = 0;
      if (const std::string reason = checkImageHeader(file, options_.pixelLimit, width, height);
          !reason.empty()) {
        IMERGE_CHECK(!options_.strict, "cannot decode image ", file, ": ", reason,
                     " (strict data mode; without it the file would be skipped)");
        reportBad(file, reason);
        ++headerFailures;
        continue;
      }
      if (firstShape_.empty()) firstShape_ = {options_.channels, height, width};
      files_.push_back(file);
      labels_.push_back(label);
      ++kept;
    }
    IMERGE_CHECK(kept > 0, "image folder ", root_, ": none of the ", found.size(),
                 " images of class ", className, " could be decoded (see the warnings above)");
    classNames_.push_back(className);
  }
  transformedShape(options_.transform, firstShape_);  // validates the transform
}

void ImageFolderDataset::reportBad(const std::string& file, const std::string& reason) const {
  std::lock_guard lock(badMutex_);
  if (!badFiles_.insert(file).second) return;  // one warning per file, however often read
  const std::string message = "warning: skipping image " + file + ": " + reason;
  if (options_.warn) {
    options_.warn(message);
  } else {
    std::cerr << message << '\n';
  }
}

Tensor ImageFolderDataset::decode(int64_t index) const {
  return decodeImageFile(files_[static_cast<size_t>(index)], options_.channels,
                         options_.pixelLimit);
}

Example ImageFolderDataset::get(int64_t index, Generator& generator) const {
  IMERGE_CHECK(index >= 0 && index < size(), describe(), ": index ", index, " out of range [0, ",
               size(), ")");
  // The replacement for a bad file is the next good index, a function of the index alone.
  for (int64_t attempt = 0; attempt < size(); ++attempt) {
    const int64_t candidate = (index + attempt) % size();
    try {
      Tensor image = decode(candidate);
      return {applyTransform(options_.transform, image, generator), labels_[candidate]};
    } catch (const Error& error) {
      if (options_.strict) throw;
      std::string reason = error.what();
      const std::string prefix = "cannot decode image " + files_[candidate] + ": ";
      const size_t at = reason.find(prefix);
      if (at != std::string::npos) reason = reason.substr(at + prefix.size());
      reportBad(files_[candidate], reason);
    }
  }
  IMERGE_FAIL("image folder ", root_, ": no image could be decoded (see the warnings above)");
}

Shape ImageFolderDataset::imageShape() const {
  return transformedShape(options_.transform, firstShape_);
}

std::string ImageFolderDataset::describe() const {
  return "image folder " + root_ + " (" + std::to_string(size()) + " images, " +
         std::to_string(classes()) + " classes" +
         (options_.transform ? ", " + options_.transform->describe() : std::string()) + ")";
}

int64_t ImageFolderDataset::skippedExamples() const {
  std::lock_guard lock(badMutex_);
  return static_cast<int64_t>(badFiles_.size());
}

std::vector<std::string> ImageFolderDataset::skippedFiles() const {
  std::lock_guard lock(badMutex_);
  return {badFiles_.begin(), badFiles_.end()};
}

}  // namespace imerge::data
