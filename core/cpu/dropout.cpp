#include "core/cpu/dropout.h"

#include "core/cpu/elementwise.h"

namespace imerge::cpu {

Tensor dropoutMask(const Shape& shape, float p, Generator& generator) {
  IMERGE_CHECK(p >= 0.0f && p <= 1.0f, "dropout: probability p = ", p, " is outside [0, 1]");
  Tensor mask = Tensor::empty(shape);
  float* keep = mask.data<float>();
  const float survivorScale = p < 1.0f ? 1.0f / (1.0f - p) : 0.0f;
  for (int64_t i = 0; i < mask.numel(); ++i) {
    keep[i] = generator.uniform(0.0f, 1.0f) < p ? 0.0f : survivorScale;
  }
  return mask;
}

Tensor dropoutApply(const Tensor& input, const Tensor& mask) {
  IMERGE_CHECK(input.shape() == mask.shape(), "dropout: input ", input.describe(), " and mask ",
               mask.describe(), " differ in shape");
  return mul(input, mask);
}

}  // namespace imerge::cpu
