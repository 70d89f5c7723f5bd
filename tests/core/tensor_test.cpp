// Tensor: views share storage, reshape and flatView check their bounds and say why, clone is
// deep, typed access checks the element type.
#include "core/tensor.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "support/error_text.h"
#include "support/tensor_builders.h"

namespace imerge {
namespace {

using testing::errorMessage;
using testing::expectContains;
using testing::floats;

TEST(Tensor, UndefinedByDefault) {
  Tensor tensor;
  EXPECT_FALSE(tensor.defined());
  EXPECT_EQ(tensor.describe(), "undefined tensor");
  EXPECT_FALSE(tensor.clone().defined());
  expectContains(errorMessage([&] { tensor.rawData(); }), "undefined tensor");
}

TEST(Tensor, FactoriesFillAndDescribe) {
  Tensor zeros = Tensor::zeros({2, 3});
  EXPECT_EQ(zeros.toVector(), std::vector<float>(6, 0.0f));
  EXPECT_EQ(zeros.numel(), 6);
  EXPECT_EQ(zeros.bytes(), 24u);
  EXPECT_EQ(zeros.describe(), "float32[2, 3]");
  EXPECT_EQ(Tensor::full({4}, 2.5f).toVector(), std::vector<float>(4, 2.5f));
  Tensor labels = Tensor::zeros({3}, DType::Int64);
  EXPECT_EQ(labels.bytes(), 24u);
  EXPECT_EQ(labels.describe(), "int64[3]");
  labels.fill(7.0f);
  EXPECT_EQ(labels.data<int64_t>()[2], 7);
  EXPECT_EQ(Tensor::zeros({0, 5}).numel(), 0);
  expectContains(errorMessage([] { Tensor::empty({2, -3}); }), "negative size in shape [2, -3]");
}

TEST(Tensor, DimCountsFromTheEndWhenNegative) {
  Tensor tensor = Tensor::zeros({2, 3, 4});
  EXPECT_EQ(tensor.ndim(), 3);
  EXPECT_EQ(tensor.dim(0), 2);
  EXPECT_EQ(tensor.dim(-1), 4);
  EXPECT_EQ(tensor.dim(-3), 2);
  expectContains(errorMessage([&] { tensor.dim(3); }),
                 "dimension 3 is out of range for float32[2, 3, 4]");
  expectContains(errorMessage([&] { tensor.dim(-4); }), "dimension -4");
}

TEST(Tensor, FromVectorChecksTheCount) {
  EXPECT_EQ(floats({1, 2, 3, 4}, {2, 2}).toVector(), (std::vector<float>{1, 2, 3, 4}));
  expectContains(errorMessage([] {
                   floats({1, 2, 3}, {2, 2});
                 }),
                 "3 values do not fill shape [2, 2]");
  Tensor labels = Tensor::fromVector(std::vector<int64_t>{4, 5}, {2});
  EXPECT_EQ(labels.dtype(), DType::Int64);
  EXPECT_EQ(labels.data<int64_t>()[1], 5);
}

TEST(Tensor, CopiesShareStorage) {
  Tensor a = floats({1, 2, 3}, {3});
  Tensor b = a;
  b.data<float>()[0] = 10;
  EXPECT_TRUE(a.sharesStorageWith(b));
  EXPECT_EQ(a.toVector()[0], 10);
}

TEST(Tensor, ReshapeIsAViewWithOneInferredSize) {
  Tensor a = floats({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {2, 6});
  Tensor b = a.reshape({3, -1});
  EXPECT_EQ(b.shape(), Shape({3, 4}));
  EXPECT_TRUE(b.sharesStorageWith(a));
  EXPECT_EQ(a.reshape({-1}).shape(), Shape({12}));
  EXPECT_EQ(a.reshape({2, -1, 3}).shape(), Shape({2, 2, 3}));
  b.data<float>()[5] = -1;
  EXPECT_EQ(a.toVector()[5], -1);
}

TEST(Tensor, BadReshapeNamesTheShapes) {
  Tensor a = Tensor::zeros({2, 3});
  const std::string counts = errorMessage([&] { a.reshape({4, 2}); });
  expectContains(counts, "cannot reshape float32[2, 3] to [4, 2]");
  expectContains(errorMessage([&] {
                   a.reshape({4, -1});
                 }),
                 "cannot reshape float32[2, 3] to [4, -1]");
  expectContains(errorMessage([&] { a.reshape({-1, -1}); }), "more than one -1 in [-1, -1]");
  expectContains(errorMessage([&] { a.reshape({-2, -3}); }), "negative size in [-2, -3]");
}

TEST(Tensor, FlatViewsAreSlicesOfOneBuffer) {
  Tensor flat = Tensor::zeros({10});
  Tensor first = flat.flatView(0, {2, 2});
  Tensor second = flat.flatView(4, {6});
  EXPECT_TRUE(first.sharesStorageWith(flat));
  EXPECT_TRUE(second.sharesStorageWith(flat));
  first.fill(1.0f);
  second.fill(2.0f);
  EXPECT_EQ(flat.toVector(), (std::vector<float>{1, 1, 1, 1, 2, 2, 2, 2, 2, 2}));
  // A view of a view is offset from the view, not from the buffer's start.
  Tensor inner = second.flatView(1, {2});
  inner.fill(3.0f);
  EXPECT_EQ(flat.toVector(), (std::vector<float>{1, 1, 1, 1, 2, 3, 3, 2, 2, 2}));
  // A reshaped view keeps its offset.
  EXPECT_EQ(second.reshape({2, 3}).toVector(), (std::vector<float>{2, 3, 3, 2, 2, 2}));
}

TEST(Tensor, FlatViewChecksBounds) {
  Tensor flat = Tensor::zeros({10});
  EXPECT_NO_THROW(flat.flatView(7, {3}));
  expectContains(errorMessage([&] { flat.flatView(8, {3}); }),
                 "[3] at offset 8 does not fit in float32[10]");
  expectContains(errorMessage([&] { flat.flatView(-1, {2}); }), "at offset -1");
  Tensor view = flat.flatView(5, {5});
  expectContains(errorMessage([&] { view.flatView(1, {5}); }), "does not fit in float32[5]");
}

TEST(Tensor, CloneIsDeep) {
  Tensor a = floats({1, 2, 3}, {3});
  Tensor b = a.clone();
  EXPECT_FALSE(b.sharesStorageWith(a));
  EXPECT_EQ(b.shape(), a.shape());
  b.data<float>()[0] = 9;
  EXPECT_EQ(a.toVector()[0], 1);
  // A clone of a view copies only the view.
  Tensor view = Tensor::full({6}, 4.0f).flatView(2, {2});
  EXPECT_EQ(view.clone().toVector(), (std::vector<float>{4, 4}));
  EXPECT_EQ(view.clone().numel(), 2);
}

TEST(Tensor, CopyFromChecksShapeAndDType) {
  Tensor destination = Tensor::zeros({3});
  destination.copyFrom(floats({1, 2, 3}, {3}));
  EXPECT_EQ(destination.toVector(), (std::vector<float>{1, 2, 3}));
  expectContains(errorMessage([&] { destination.copyFrom(Tensor::zeros({4})); }),
                 "source float32[4] does not match destination float32[3]");
  expectContains(errorMessage([&] { destination.copyFrom(Tensor::zeros({3}, DType::Int32)); }),
                 "int32[3]");
}

TEST(Tensor, TypedAccessChecksTheDType) {
  Tensor values = Tensor::zeros({2});
  expectContains(errorMessage([&] { values.data<int64_t>(); }),
                 "asked for int64 data of float32[2]");
  Tensor labels = Tensor::zeros({4}, DType::Int64);
  expectContains(errorMessage([&] { labels.data<float>(); }), "asked for float32 data of int64[4]");
  expectContains(errorMessage([&] { labels.toVector(); }), "int64[4]");
}

TEST(Tensor, ItemNeedsOneElement) {
  EXPECT_FLOAT_EQ(Tensor::full({1, 1}, 3.5f).item(), 3.5f);
  expectContains(errorMessage([] { Tensor::zeros({2}).item(); }),
                 "float32[2] has 2 elements, not 1");
}

TEST(Tensor, StorageIsAlignedAndOnTheCpu) {
  Tensor tensor = Tensor::zeros({3, 5});
  EXPECT_EQ(reinterpret_cast<uintptr_t>(tensor.rawData()) % CpuDevice::kAlignment, 0u);
  EXPECT_EQ(tensor.device().type(), DeviceType::CPU);
  EXPECT_EQ(tensor.device().name(), "cpu");
}

}  // namespace
}  // namespace imerge
