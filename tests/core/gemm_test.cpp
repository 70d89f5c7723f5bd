// cpu::sgemm and cpu::gemm against a naive triple loop in double, for every transpose
// combination, alpha/beta accumulation and the degenerate sizes.
#include "core/cpu/gemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "support/compare.h"
#include "support/error_text.h"
#include "support/gradcheck.h"
#include "support/reference_data.h"

namespace imerge {
namespace {

using cpu::Transpose;
using testing::errorMessage;
using testing::expectAllClose;
using testing::expectContains;
using testing::randomTensor;

// c [m, n] = alpha * op(a) op(b) + beta * c, element by element in double.
Tensor naiveGemm(const Tensor& a, const Tensor& b, Transpose ta, Transpose tb, float alpha,
                 float beta, const Tensor& c) {
  const int64_t m = ta == Transpose::Yes ? a.dim(1) : a.dim(0);
  const int64_t k = ta == Transpose::Yes ? a.dim(0) : a.dim(1);
  const int64_t n = tb == Transpose::Yes ? b.dim(0) : b.dim(1);
  Tensor out = c.clone();
  const float* x = a.data<float>();
  const float* y = b.data<float>();
  float* z = out.data<float>();
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double total = 0;
      for (int64_t p = 0; p < k; ++p) {
        const float left = ta == Transpose::Yes ? x[p * a.dim(1) + i] : x[i * a.dim(1) + p];
        const float right = tb == Transpose::Yes ? y[j * b.dim(1) + p] : y[p * b.dim(1) + j];
        total += static_cast<double>(left) * right;
      }
      z[i * n + j] = static_cast<float>(alpha * total + beta * z[i * n + j]);
    }
  }
  return out;
}

struct GemmCase {
  Transpose ta;
  Transpose tb;
};

class GemmTransposeTest : public ::testing::TestWithParam<GemmCase> {};

TEST_P(GemmTransposeTest, MatchesNaiveProductWithAlphaBeta) {
  const auto [ta, tb] = GetParam();
  const int64_t m = 37, n = 19, k = 53;  // odd sizes: no kernel's favourite block size
  const Tensor a = randomTensor(ta == Transpose::Yes ? Shape{k, m} : Shape{m, k}, 1);
  const Tensor b = randomTensor(tb == Transpose::Yes ? Shape{n, k} : Shape{k, n}, 2);
  const Tensor c0 = randomTensor({m, n}, 3);

  Tensor product = cpu::gemm(a, b, ta, tb);
  expectAllClose(product, naiveGemm(a, b, ta, tb, 1.0f, 0.0f, Tensor::zeros({m, n})), 1e-5f, 1e-5f,
                 "gemm");

  Tensor accumulated = c0.clone();
  cpu::gemmInto(accumulated, a, b, ta, tb, 0.5f, 2.0f);
  expectAllClose(accumulated, naiveGemm(a, b, ta, tb, 0.5f, 2.0f, c0), 1e-5f, 1e-5f,
                 "gemmInto alpha 0.5 beta 2");
}

INSTANTIATE_TEST_SUITE_P(AllTransposes, GemmTransposeTest,
                         ::testing::Values(GemmCase{Transpose::No, Transpose::No},
                                           GemmCase{Transpose::No, Transpose::Yes},
                                           GemmCase{Transpose::Yes, Transpose::No},
                                           GemmCase{Transpose::Yes, Transpose::Yes}));

TEST(Gemm, BetaZeroIgnoresGarbageInOutput) {
  const Tensor a = randomTensor({4, 3}, 4);
  const Tensor b = randomTensor({3, 5}, 5);
  Tensor out = Tensor::full({4, 5}, std::nanf(""));
  cpu::gemmInto(out, a, b, Transpose::No, Transpose::No, 1.0f, 0.0f);
  expectAllClose(out, cpu::gemm(a, b), 0.0f, 0.0f, "beta 0 over NaNs");
}

TEST(Gemm, EmptyInnerDimensionGivesZerosOrScaledOutput) {
  const Tensor a = Tensor::empty({3, 0});
  const Tensor b = Tensor::empty({0, 2});
  expectAllClose(cpu::gemm(a, b), Tensor::zeros({3, 2}), 0.0f, 0.0f, "k = 0");
  Tensor out = Tensor::full({3, 2}, 2.0f);
  cpu::gemmInto(out, a, b, Transpose::No, Transpose::No, 1.0f, 0.5f);
  expectAllClose(out, Tensor::full({3, 2}, 1.0f), 0.0f, 0.0f, "k = 0, beta 0.5");
}

TEST(Gemm, LargeSquareProductMatchesNaive) {
  // Big enough for OpenBLAS to split the work over threads.
  const Tensor a = randomTensor({256, 200}, 6);
  const Tensor b = randomTensor({200, 300}, 7);
  expectAllClose(
      cpu::gemm(a, b),
      naiveGemm(a, b, Transpose::No, Transpose::No, 1.0f, 0.0f, Tensor::zeros({256, 300})), 1e-4f,
      1e-4f, "256x200x300");
}

TEST(Gemm, RejectsMismatchedShapesNamingThem) {
  const Tensor a = randomTensor({4, 3}, 8);
  const Tensor b = randomTensor({5, 2}, 9);
  EXPECT_THROW(cpu::gemm(a, b), Error);
  expectContains(errorMessage([&] { cpu::gemm(a, b); }), "float32[4, 3]");
  expectContains(errorMessage([&] { cpu::gemm(a, b); }), "float32[5, 2]");
  // Transposing b makes it [2, 5]: still no match with a's 3 columns.
  expectContains(errorMessage([&] { cpu::gemm(a, b, Transpose::No, Transpose::Yes); }), "b^T");

  Tensor wrongOut = Tensor::empty({4, 4});
  const Tensor c = randomTensor({3, 2}, 10);
  expectContains(errorMessage([&] { cpu::gemmInto(wrongOut, a, c, Transpose::No, Transpose::No); }),
                 "float32[4, 4]");
}

TEST(Gemm, RejectsWrongRankAndDType) {
  const Tensor vector = randomTensor({4}, 11);
  const Tensor matrix = randomTensor({4, 4}, 12);
  expectContains(errorMessage([&] { cpu::gemm(vector, matrix); }), "float32[4] must be 2-D");
  const Tensor integers = Tensor::fromVector(std::vector<int64_t>{1, 2, 3, 4}, {2, 2});
  expectContains(errorMessage([&] { cpu::gemm(integers, matrix); }), "int64[2, 2] must be float32");
}

}  // namespace
}  // namespace imerge
