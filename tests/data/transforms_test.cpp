// Transforms against values computed by hand (and, for resize, PyTorch's bilinear rule written
// out): flip, crop with padding, centre crop, resize up and down, normalise, composition.
#include "data/transforms.h"

#include <gtest/gtest.h>

#include <set>
#include <utility>
#include <vector>

#include "support/error_text.h"

namespace imerge::data {
namespace {

using testing::errorMessage;
using testing::expectContains;

Tensor image(const std::vector<float>& values, const Shape& shape) {
  return Tensor::fromVector(values, shape);
}

std::vector<float> iota(int64_t count) {
  std::vector<float> values(static_cast<size_t>(count));
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
  return values;
}

TEST(Transforms, HorizontalFlipMirrorsEveryRowOfEveryChannel) {
  Generator generator(1);
  const Tensor input = image({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {2, 2, 3});
  const Tensor flipped = randomHorizontalFlip(1.0)->apply(input, generator);
  EXPECT_EQ(flipped.shape(), (Shape{2, 2, 3}));
  EXPECT_EQ(flipped.toVector(), (std::vector<float>{3, 2, 1, 6, 5, 4, 9, 8, 7, 12, 11, 10}));
  EXPECT_EQ(randomHorizontalFlip(0.0)->apply(input, generator).toVector(), input.toVector());
}

TEST(Transforms, HorizontalFlipWithHalfProbabilityFlipsSome) {
  const Tensor input = image({1, 2}, {1, 1, 2});
  const TransformPtr flip = randomHorizontalFlip(0.5);
  int flips = 0;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    Generator generator(seed);
    flips += flip->apply(input, generator).toVector()[0] == 2.0f;
  }
  EXPECT_GT(flips, 60);
  EXPECT_LT(flips, 140);
}

TEST(Transforms, RandomCropOfThePaddedSizeIsTheWholePaddedImage) {
  Generator generator(0);
  const Tensor input = image({1, 2, 3, 4}, {1, 2, 2});
  const Tensor cropped = randomCrop(4, 4, 1)->apply(input, generator);
  EXPECT_EQ(cropped.shape(), (Shape{1, 4, 4}));
  EXPECT_EQ(cropped.toVector(),
            (std::vector<float>{0, 0, 0, 0, 0, 1, 2, 0, 0, 3, 4, 0, 0, 0, 0, 0}));
}

TEST(Transforms, RandomCropWithPaddingTakesEachWindowOfThePaddedImage) {
  // [[1, 2], [3, 4]] padded by 1 is a 4x4 image; its nine 2x2 windows, by (top, left).
  const Tensor input = image({1, 2, 3, 4}, {1, 2, 2});
  const std::vector<float> padded = {0, 0, 0, 0, 0, 1, 2, 0, 0, 3, 4, 0, 0, 0, 0, 0};
  const TransformPtr crop = randomCrop(2, 2, 1);
  std::set<std::pair<int, int>> offsets;
  for (uint64_t seed = 0; seed < 100; ++seed) {
    Generator generator(seed);
    Generator replay(seed);  // the transform draws top, then left
    const int top = static_cast<int>(replay.nextInt(3));
    const int left = static_cast<int>(replay.nextInt(3));
    offsets.insert({top, left});
    const std::vector<float> expected = {padded[top * 4 + left], padded[top * 4 + left + 1],
                                         padded[(top + 1) * 4 + left],
                                         padded[(top + 1) * 4 + left + 1]};
    EXPECT_EQ(crop->apply(input, generator).toVector(), expected) << "seed " << seed;
  }
  EXPECT_EQ(offsets.size(), 9u);
}

TEST(Transforms, CenterCropTakesTheMiddleAndRoundsHalfToEven) {
  Generator generator(0);
  // 4x4 values 0..15: the middle 2x2 starts at (1, 1).
  EXPECT_EQ(centerCrop(2, 2)->apply(image(iota(16), {1, 4, 4}), generator).toVector(),
            (std::vector<float>{5, 6, 9, 10}));
  // 3x3 to 2x2: the offset (3 - 2) / 2 = 0.5 rounds to 0, as Python's round in torchvision.
  EXPECT_EQ(centerCrop(2, 2)->apply(image(iota(9), {1, 3, 3}), generator).toVector(),
            (std::vector<float>{0, 1, 3, 4}));
  // A crop larger than the image pads with zeros around it.
  EXPECT_EQ(centerCrop(4, 4)->apply(image({1, 2, 3, 4}, {1, 2, 2}), generator).toVector(),
            (std::vector<float>{0, 0, 0, 0, 0, 1, 2, 0, 0, 3, 4, 0, 0, 0, 0, 0}));
}

TEST(Transforms, BilinearResizeOfTwoByTwoToFourByFour) {
  // PyTorch, align_corners=False: output row y samples source row max(0, (y + 0.5) / 2 - 0.5),
  // that is 0, 0.25, 0.75 and 1 (the last clamped); the image 2 * row + column is linear, so
  // the result is 2 * r[y] + r[x].
  Generator generator(0);
  const Tensor resized = resize(4, 4)->apply(image({0, 1, 2, 3}, {1, 2, 2}), generator);
  ASSERT_EQ(resized.shape(), (Shape{1, 4, 4}));
  const float r[4] = {0.0f, 0.25f, 0.75f, 1.0f};
  const std::vector<float> values = resized.toVector();
  for (int y = 0; y < 4; ++y) {
    for (int x = 0; x < 4; ++x) {
      EXPECT_FLOAT_EQ(values[y * 4 + x], 2 * r[y] + r[x]) << "at " << y << ", " << x;
    }
  }
}

TEST(Transforms, BilinearResizeDownAveragesNeighbours) {
  // 4x4 to 2x2 samples source 0.5 and 2.5: the mean of each 2x2 block of 4 * y + x.
  Generator generator(0);
  const Tensor resized = resize(2, 2)->apply(image(iota(16), {1, 4, 4}), generator);
  EXPECT_EQ(resized.toVector(), (std::vector<float>{2.5f, 4.5f, 10.5f, 12.5f}));
}

TEST(Transforms, ResizeShorterSideKeepsTheAspectRatio) {
  Generator generator(0);
  const TransformPtr shorter = resizeShorterSide(4);
  EXPECT_EQ(shorter->apply(image(iota(16), {2, 2, 4}), generator).shape(), (Shape{2, 4, 8}));
  EXPECT_EQ(shorter->apply(image(iota(12), {1, 4, 3}), generator).shape(), (Shape{1, 5, 4}));
  EXPECT_EQ(shorter->outputShape({3, -1, -1}), (Shape{3, -1, -1}));
}

TEST(Transforms, NormalizePerChannel) {
  Generator generator(0);
  const Tensor input = image({0.5f, 1.0f, 1.0f, 5.0f}, {2, 1, 2});
  const Tensor normalized = normalize({0.5f, 1.0f}, {0.5f, 2.0f})->apply(input, generator);
  EXPECT_EQ(normalized.toVector(), (std::vector<float>{0.0f, 1.0f, 0.0f, 2.0f}));
  // One mean and deviation apply to every channel.
  EXPECT_EQ(normalize({1.0f}, {0.5f})->apply(input, generator).toVector(),
            (std::vector<float>{-1.0f, 0.0f, 0.0f, 8.0f}));
}

TEST(Transforms, ComposeAppliesInOrderAndPredictsTheShape) {
  Generator generator(0);
  const TransformPtr pipeline =
      compose({centerCrop(2, 2), randomHorizontalFlip(1.0), normalize({1.0f}, {2.0f})});
  EXPECT_EQ(pipeline->outputShape({1, 4, 4}), (Shape{1, 2, 2}));
  EXPECT_EQ(pipeline->apply(image(iota(16), {1, 4, 4}), generator).toVector(),
            (std::vector<float>{2.5f, 2.0f, 4.5f, 4.0f}));  // ([6 5; 10 9] - 1) / 2
  expectContains(pipeline->describe(), "centerCrop(2x2)");
  EXPECT_EQ(transformedShape(nullptr, {3, 5, 5}), (Shape{3, 5, 5}));
}

TEST(Transforms, BadArgumentsAreClearErrors) {
  Generator generator(0);
  expectContains(errorMessage([] {
                   normalize({0.5f, 0.5f}, {1.0f});
                 }),
                 "2 means and 1 standard deviations");
  expectContains(errorMessage([] { normalize({0.5f}, {0.0f}); }), "must be positive");
  expectContains(errorMessage([] {
                   normalize({0.1f, 0.2f}, {1.0f, 1.0f})->outputShape({3, 4, 4});
                 }),
                 "for an image of 3 channels");
  expectContains(errorMessage([&] {
                   randomCrop(5, 5)->apply(image({1, 2, 3, 4}, {1, 2, 2}), generator);
                 }),
                 "does not fit");
  expectContains(errorMessage([] { resize(0, 4); }), "must be positive");
  expectContains(errorMessage([] { randomHorizontalFlip(1.5); }), "[0, 1]");
  expectContains(errorMessage([&] {
                   resize(2, 2)->apply(image({1, 2}, {2}), generator);
                 }),
                 "expected a float32 image [C, H, W]");
}

}  // namespace
}  // namespace imerge::data
