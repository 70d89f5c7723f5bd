// One PNG or JPEG file, decoded with stb_image into a float tensor, as ImageFolderDataset reads
// its images and imerge-predict a user's. Checked before anything is allocated for the pixels:
// the file must be a regular file within kMaxImageFileBytes, and the width x height its header
// declares within a pixel limit (a 2 KB file may claim 20000 x 20000, 6 GB to decode).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "core/tensor.h"

namespace imerge::data {

inline constexpr uint64_t kMaxImageFileBytes = uint64_t{256} << 20;
// The pixel limit unless the caller gives one (64 megapixels, 8192 x 8192: far above the
// photographs of ImageNet-style folders).
inline constexpr int64_t kDefaultMaxImagePixels = int64_t{64} << 20;

// .png, .jpg or .jpeg, in any letter case.
bool isImageFile(const std::filesystem::path& path);

struct PixelLimit {
  int64_t maxPixels = kDefaultMaxImagePixels;
  std::string hint;  // ends the refusal: how the caller lets a user raise the limit
};

// What the file's header says (stbi_info on its first 16 KB, or on all of it where a JPEG's
// segments before its frame header run on; data/jpeg_huffman_guard.h checks them first): ""
// when it decodes and is within the limit, else why not ("its header declares 20000x20000
// pixels, more than the ...", "its JPEG Huffman table ... declares 530 codes ...").
// `width`/`height` are set when the header decodes.
std::string checkImageHeader(const std::string& path, const PixelLimit& limit, int& width,
                             int& height);

// The image as float32 [channels, H, W] in [0, 1] (byte / 255, as torchvision's ToTensor);
// channels 1 is luma, 3 is RGB (greyscale replicated, alpha dropped). Throws imerge::Error
// "cannot decode image <path>: <reason>".
Tensor decodeImageFile(const std::string& path, int channels, const PixelLimit& limit);

}  // namespace imerge::data
