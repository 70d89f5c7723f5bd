// 1x1 convolutions as matrix products (core/cpu/pointwise_conv.h) against the sums written out
// in double, with and without a bias, on odd channel counts and planes; and which convolutions
// it takes.
#include "core/cpu/pointwise_conv.h"

#include <gtest/gtest.h>

#include <vector>

#include "core/cpu/convolution.h"
#include "support/compare.h"
#include "support/gradcheck.h"

namespace imerge {
namespace {

using testing::closeToScale;
using testing::randomTensor;

// y[n][k][p] = b[k] + sum_c w[k][c] x[n][c][p]; dx and dw the same sums read the other ways.
struct Sums {
  Tensor output, gradInput, gradWeight, gradBias;
};

Sums sumsInDouble(const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& dy) {
  const int64_t n = x.dim(0), c = x.dim(1), plane = x.dim(2) * x.dim(3), k = w.dim(0);
  std::vector<double> y(n * k * plane, 0.0), dx(n * c * plane, 0.0), dw(k * c, 0.0), db(k, 0.0);
  const float *xs = x.data<float>(), *ws = w.data<float>(), *dys = dy.data<float>();
  for (int64_t image = 0; image < n; ++image) {
    for (int64_t o = 0; o < k; ++o) {
      for (int64_t p = 0; p < plane; ++p) {
        const int64_t yi = (image * k + o) * plane + p;
        y[yi] = b.defined() ? b.data<float>()[o] : 0.0;
        db[o] += dys[yi];
        for (int64_t i = 0; i < c; ++i) {
          const int64_t xi = (image * c + i) * plane + p;
          y[yi] += static_cast<double>(ws[o * c + i]) * xs[xi];
          dx[xi] += static_cast<double>(ws[o * c + i]) * dys[yi];
          dw[o * c + i] += static_cast<double>(xs[xi]) * dys[yi];
        }
      }
    }
  }
  const auto toTensor = [](const std::vector<double>& values, const Shape& shape) {
    return Tensor::fromVector(std::vector<float>(values.begin(), values.end()), shape);
  };
  return {toTensor(y, {n, k, x.dim(2), x.dim(3)}), toTensor(dx, x.shape()), toTensor(dw, w.shape()),
          toTensor(db, {k})};
}

TEST(PointwiseConv, ThreePassesMatchTheSums) {
  struct Case {
    Shape input;
    int64_t outChannels;
    bool bias;
  };
  for (const Case& c : {Case{{3, 5, 7, 9}, 11, true}, Case{{1, 16, 4, 4}, 8, false},
                        Case{{2, 33, 1, 13}, 17, true}}) {
    const Tensor x = randomTensor(c.input, 31);
    const Tensor w = randomTensor({c.outChannels, c.input[1], 1, 1}, 32);
    const Tensor b = c.bias ? randomTensor({c.outChannels}, 33) : Tensor();
    const Tensor dy = randomTensor({c.input[0], c.outChannels, c.input[2], c.input[3]}, 34);
    const Sums expected = sumsInDouble(x, w, b, dy);
    EXPECT_TRUE(closeToScale(cpu::pointwiseConv2dForward(x, w, b), expected.output, 1e-5, "y"));
    EXPECT_TRUE(closeToScale(cpu::pointwiseConv2dBackwardData(dy, w, x.shape()), expected.gradInput,
                             1e-5, "dx"));
    EXPECT_TRUE(closeToScale(cpu::pointwiseConv2dBackwardWeights(x, dy, w.shape()),
                             expected.gradWeight, 1e-5, "dw"));
    // conv2d's backward adds the bias gradient beside the pointwise weight gradient.
    if (c.bias) {
      const Conv2dGrads grads = cpu::conv2dBackward(x, w, dy, Conv2dParams(), true, true, true);
      EXPECT_TRUE(closeToScale(grads.bias, expected.gradBias, 1e-5, "db"));
    }
  }
}

// Which convolutions it takes. (Its results cannot tell it from oneDNN's 1x1 kernels, which sum
// in the same order and agree bit for bit here.)
TEST(PointwiseConv, AppliesToOneByOneStrideOneUnpaddedUngrouped) {
  const Shape weight{8, 4, 1, 1};
  Conv2dParams params;
  EXPECT_TRUE(cpu::pointwiseApplies(weight, params));
  params.stride = {2, 2};
  EXPECT_FALSE(cpu::pointwiseApplies(weight, params)) << "stride 2";
  params = Conv2dParams();
  params.padding = {1, 1};
  EXPECT_FALSE(cpu::pointwiseApplies(weight, params)) << "padded";
  params = Conv2dParams();
  params.groups = 2;
  EXPECT_FALSE(cpu::pointwiseApplies({8, 2, 1, 1}, params)) << "grouped";
  EXPECT_FALSE(cpu::pointwiseApplies({8, 4, 3, 3}, Conv2dParams())) << "3x3";
}

}  // namespace
}  // namespace imerge
