#include "layers/activation.h"

namespace imerge::layers {

Dropout::Dropout(float p, Generator& generator) : p_(p), generator_(&generator) {
  IMERGE_CHECK(p >= 0.0f && p < 1.0f, "Dropout: p must be in [0, 1), got ", p);
}

LocalResponseNorm::LocalResponseNorm(int64_t size, float alpha, float beta, float k)
    : size_(size), alpha_(alpha), beta_(beta), k_(k) {
  IMERGE_CHECK(size > 0, "LocalResponseNorm: size must be positive, got ", size);
}

}  // namespace imerge::layers
