#include "data/transforms.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>
#include <utility>

namespace imerge::data {
namespace {

void checkImage(const Tensor& image, const char* who) {
  IMERGE_CHECK(image.defined() && image.ndim() == 3 && image.dtype() == DType::Float32, who,
               ": expected a float32 image [C, H, W], got ",
               image.defined() ? image.describe() : std::string("an undefined tensor"));
}

// The window [top, top + height) x [left, left + width) of `image`; pixels outside it are 0, which
// is both RandomCrop's zero padding and CenterCrop's padding of a too-small image.
Tensor cropWithZeros(const Tensor& image, int64_t top, int64_t left, int64_t height,
                     int64_t width) {
  const int64_t channels = image.dim(0);
  const int64_t inHeight = image.dim(1);
  const int64_t inWidth = image.dim(2);
  Tensor out = Tensor::zeros({channels, height, width});  // [C, height, width]
  const float* in = image.data<float>();
  float* target = out.data<float>();
  const int64_t firstColumn = std::max<int64_t>(0, -left);
  const int64_t lastColumn = std::min<int64_t>(width, inWidth - left);  // exclusive
  if (lastColumn <= firstColumn) return out;
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t y = 0; y < height; ++y) {
      const int64_t sourceRow = top + y;
      if (sourceRow < 0 || sourceRow >= inHeight) continue;
      std::memcpy(target + (c * height + y) * width + firstColumn,
                  in + (c * inHeight + sourceRow) * inWidth + left + firstColumn,
                  sizeof(float) * static_cast<size_t>(lastColumn - firstColumn));
    }
  }
  return out;
}

// PyTorch's area_pixel_compute_source_index with align_corners=False, and the neighbour and
// weights upsample_bilinear2d derives from it.
struct Tap {
  int64_t low;
  int64_t step;  // 0 at the last row/column, else 1
  float highWeight;
};

std::vector<Tap> bilinearTaps(int64_t inSize, int64_t outSize) {
  const float scale = static_cast<float>(inSize) / static_cast<float>(outSize);
  std::vector<Tap> taps(static_cast<size_t>(outSize));
  for (int64_t i = 0; i < outSize; ++i) {
    const float source = std::max(0.0f, scale * (static_cast<float>(i) + 0.5f) - 0.5f);
    const auto low = static_cast<int64_t>(source);
    taps[static_cast<size_t>(i)] = {low, low < inSize - 1 ? 1 : 0,
                                    source - static_cast<float>(low)};
  }
  return taps;
}

Tensor bilinearResize(const Tensor& image, int64_t height, int64_t width) {
  const int64_t channels = image.dim(0);
  const int64_t inHeight = image.dim(1);
  const int64_t inWidth = image.dim(2);
  if (inHeight == height && inWidth == width) return image.clone();
  const std::vector<Tap> rows = bilinearTaps(inHeight, height);
  const std::vector<Tap> columns = bilinearTaps(inWidth, width);
  Tensor out = Tensor::empty({channels, height, width});  // [C, height, width]
  const float* in = image.data<float>();
  float* target = out.data<float>();
  for (int64_t c = 0; c < channels; ++c) {
    const float* plane = in + c * inHeight * inWidth;
    for (int64_t y = 0; y < height; ++y) {
      const Tap& row = rows[static_cast<size_t>(y)];
      const float* top = plane + row.low * inWidth;
      const float* bottom = top + row.step * inWidth;
      for (int64_t x = 0; x < width; ++x) {
        const Tap& column = columns[static_cast<size_t>(x)];
        const int64_t left = column.low;
        const int64_t right = left + column.step;
        const float w1 = column.highWeight;
        const float w0 = 1.0f - w1;
        const float h1 = row.highWeight;
        const float h0 = 1.0f - h1;
        target[(c * height + y) * width + x] =
            h0 * (w0 * top[left] + w1 * top[right]) + h1 * (w0 * bottom[left] + w1 * bottom[right]);
      }
    }
  }
  return out;
}

void checkSize(int64_t height, int64_t width, const char* who) {
  IMERGE_CHECK(height > 0 && width > 0, who, ": output size must be positive, got ", height, "x",
               width);
}

void checkInputShape(const Shape& input, const char* who) {
  IMERGE_CHECK(input.size() == 3, who, ": expected an image shape [C, H, W], got ",
               shapeToString(input));
}

class Resize final : public Transform {
 public:
  Resize(int64_t height, int64_t width) : height_(height), width_(width) {
    checkSize(height, width, "resize");
  }
  Tensor apply(const Tensor& image, Generator&) const override {
    checkImage(image, "resize");
    return bilinearResize(image, height_, width_);
  }
  Shape outputShape(const Shape& input) const override {
    checkInputShape(input, "resize");
    return {input[0], height_, width_};
  }
  std::string describe() const override {
    return "resize(" + std::to_string(height_) + "x" + std::to_string(width_) + ")";
  }

 private:
  int64_t height_, width_;
};

class ResizeShorterSide final : public Transform {
 public:
  explicit ResizeShorterSide(int64_t size) : size_(size) {
    checkSize(size, size, "resizeShorterSide");
  }
  Tensor apply(const Tensor& image, Generator&) const override {
    checkImage(image, "resizeShorterSide");
    const int64_t height = image.dim(1);
    const int64_t width = image.dim(2);
    // Integer arithmetic gives torchvision's int(size * long / short) without float rounding.
    if (height <= width) return bilinearResize(image, size_, size_ * width / height);
    return bilinearResize(image, size_ * height / width, size_);
  }
  Shape outputShape(const Shape& input) const override {
    checkInputShape(input, "resizeShorterSide");
    if (input[1] < 0 || input[2] < 0) return {input[0], -1, -1};
    if (input[1] <= input[2]) return {input[0], size_, size_ * input[2] / input[1]};
    return {input[0], size_ * input[1] / input[2], size_};
  }
  std::string describe() const override {
    return "resizeShorterSide(" + std::to_string(size_) + ")";
  }

 private:
  int64_t size_;
};

class RandomCrop final : public Transform {
 public:
  RandomCrop(int64_t height, int64_t width, int64_t padding)
      : height_(height), width_(width), padding_(padding) {
    checkSize(height, width, "randomCrop");
    IMERGE_CHECK(padding >= 0, "randomCrop: padding must be >= 0, got ", padding);
  }
  Tensor apply(const Tensor& image, Generator& generator) const override {
    checkImage(image, "randomCrop");
    const int64_t paddedHeight = image.dim(1) + 2 * padding_;
    const int64_t paddedWidth = image.dim(2) + 2 * padding_;
    IMERGE_CHECK(paddedHeight >= height_ && paddedWidth >= width_, "randomCrop: a ", height_, "x",
                 width_, " crop does not fit in image ", image.describe(), " padded by ", padding_);
    // Offsets in the padded image, drawn top first as torchvision's get_params does.
    const auto top =
        static_cast<int64_t>(generator.nextInt(static_cast<uint64_t>(paddedHeight - height_ + 1)));
    const auto left =
        static_cast<int64_t>(generator.nextInt(static_cast<uint64_t>(paddedWidth - width_ + 1)));
    return cropWithZeros(image, top - padding_, left - padding_, height_, width_);
  }
  Shape outputShape(const Shape& input) const override {
    checkInputShape(input, "randomCrop");
    return {input[0], height_, width_};
  }
  std::string describe() const override {
    return "randomCrop(" + std::to_string(height_) + "x" + std::to_string(width_) + ", padding " +
           std::to_string(padding_) + ")";
  }

 private:
  int64_t height_, width_, padding_;
};

class CenterCrop final : public Transform {
 public:
  CenterCrop(int64_t height, int64_t width) : height_(height), width_(width) {
    checkSize(height, width, "centerCrop");
  }
  Tensor apply(const Tensor& image, Generator&) const override {
    checkImage(image, "centerCrop");
    // Python's round() rounds half to even; nearbyint does too in the default rounding mode.
    const auto top =
        static_cast<int64_t>(std::nearbyint(static_cast<double>(image.dim(1) - height_) / 2.0));
    const auto left =
        static_cast<int64_t>(std::nearbyint(static_cast<double>(image.dim(2) - width_) / 2.0));
    return cropWithZeros(image, top, left, height_, width_);
  }
  Shape outputShape(const Shape& input) const override {
    checkInputShape(input, "centerCrop");
    return {input[0], height_, width_};
  }
  std::string describe() const override {
    return "centerCrop(" + std::to_string(height_) + "x" + std::to_string(width_) + ")";
  }

 private:
  int64_t height_, width_;
};

class RandomHorizontalFlip final : public Transform {
 public:
  explicit RandomHorizontalFlip(double probability) : probability_(probability) {
    IMERGE_CHECK(probability >= 0.0 && probability <= 1.0,
                 "randomHorizontalFlip: probability must be in [0, 1], got ", probability);
  }
  Tensor apply(const Tensor& image, Generator& generator) const override {
    checkImage(image, "randomHorizontalFlip");
    // Always draw, so the generator advances the same way whether or not this image flips.
    const bool flip = generator.uniform(0.0f, 1.0f) < static_cast<float>(probability_);
    if (!flip) return image.clone();
    const int64_t rows = image.dim(0) * image.dim(1);
    const int64_t width = image.dim(2);
    Tensor out = Tensor::empty(image.shape());
    const float* in = image.data<float>();
    float* target = out.data<float>();
    for (int64_t row = 0; row < rows; ++row) {
      std::reverse_copy(in + row * width, in + (row + 1) * width, target + row * width);
    }
    return out;
  }
  Shape outputShape(const Shape& input) const override {
    checkInputShape(input, "randomHorizontalFlip");
    return input;
  }
  std::string describe() const override {
    std::ostringstream text;
    text << "randomHorizontalFlip(p=" << probability_ << ")";
    return text.str();
  }

 private:
  double probability_;
};

class Normalize final : public Transform {
 public:
  Normalize(std::vector<float> mean, std::vector<float> stddev)
      : mean_(std::move(mean)), stddev_(std::move(stddev)) {
    IMERGE_CHECK(!mean_.empty() && mean_.size() == stddev_.size(), "normalize: ", mean_.size(),
                 " means and ", stddev_.size(),
                 " standard deviations; give one of each per "
                 "channel (or one of each for all channels)");
    for (float value : stddev_) {
      IMERGE_CHECK(value > 0.0f, "normalize: standard deviations must be positive, got ", value);
    }
  }
  Tensor apply(const Tensor& image, Generator&) const override {
    checkImage(image, "normalize");
    const int64_t channels = image.dim(0);
    checkChannels(channels);
    const int64_t plane = image.dim(1) * image.dim(2);
    Tensor out = Tensor::empty(image.shape());
    const float* in = image.data<float>();
    float* target = out.data<float>();
    for (int64_t c = 0; c < channels; ++c) {
      const size_t which = mean_.size() == 1 ? 0 : static_cast<size_t>(c);
      const float mean = mean_[which];
      const float stddev = stddev_[which];
      // A division, as torchvision's normalize, so the results agree to the last bit.
      for (int64_t i = c * plane; i < (c + 1) * plane; ++i) target[i] = (in[i] - mean) / stddev;
    }
    return out;
  }
  Shape outputShape(const Shape& input) const override {
    checkInputShape(input, "normalize");
    if (input[0] >= 0) checkChannels(input[0]);
    return input;
  }
  std::string describe() const override {
    std::ostringstream text;
    text << "normalize(mean [";
    for (size_t i = 0; i < mean_.size(); ++i) text << (i ? ", " : "") << mean_[i];
    text << "], std [";
    for (size_t i = 0; i < stddev_.size(); ++i) text << (i ? ", " : "") << stddev_[i];
    text << "])";
    return text.str();
  }

 private:
  void checkChannels(int64_t channels) const {
    IMERGE_CHECK(mean_.size() == 1 || static_cast<int64_t>(mean_.size()) == channels,
                 "normalize: ", mean_.size(), " means and standard deviations for an image of ",
                 channels, " channels");
  }
  std::vector<float> mean_, stddev_;
};

class Compose final : public Transform {
 public:
  explicit Compose(std::vector<TransformPtr> transforms) : transforms_(std::move(transforms)) {
    for (size_t i = 0; i < transforms_.size(); ++i) {
      IMERGE_CHECK(transforms_[i] != nullptr, "compose: transform ", i, " is null");
    }
  }
  Tensor apply(const Tensor& image, Generator& generator) const override {
    Tensor current = image;
    for (const TransformPtr& transform : transforms_)
      current = transform->apply(current, generator);
    return transforms_.empty() ? image.clone() : current;
  }
  Shape outputShape(const Shape& input) const override {
    Shape shape = input;
    for (const TransformPtr& transform : transforms_) shape = transform->outputShape(shape);
    return shape;
  }
  std::string describe() const override {
    std::string text = "compose(";
    for (size_t i = 0; i < transforms_.size(); ++i) {
      text += (i ? ", " : "") + transforms_[i]->describe();
    }
    return text + ")";
  }

 private:
  std::vector<TransformPtr> transforms_;
};

}  // namespace

TransformPtr resize(int64_t height, int64_t width) {
  return std::make_shared<Resize>(height, width);
}
TransformPtr resizeShorterSide(int64_t size) {
  return std::make_shared<ResizeShorterSide>(size);
}
TransformPtr randomCrop(int64_t height, int64_t width, int64_t padding) {
  return std::make_shared<RandomCrop>(height, width, padding);
}
TransformPtr centerCrop(int64_t height, int64_t width) {
  return std::make_shared<CenterCrop>(height, width);
}
TransformPtr randomHorizontalFlip(double probability) {
  return std::make_shared<RandomHorizontalFlip>(probability);
}
TransformPtr normalize(std::vector<float> mean, std::vector<float> stddev) {
  return std::make_shared<Normalize>(std::move(mean), std::move(stddev));
}
TransformPtr compose(std::vector<TransformPtr> transforms) {
  return std::make_shared<Compose>(std::move(transforms));
}

Shape transformedShape(const TransformPtr& transform, const Shape& input) {
  return transform ? transform->outputShape(input) : input;
}

Tensor applyTransform(const TransformPtr& transform, const Tensor& image, Generator& generator) {
  return transform ? transform->apply(image, generator) : image;
}

}  // namespace imerge::data
