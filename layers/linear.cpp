#include "layers/linear.h"

#include "autograd/ops/linear.h"
#include "layers/init.h"

namespace imerge::layers {

Linear::Linear(int64_t inFeatures, int64_t outFeatures, bool bias, Generator& generator)
    : inFeatures_(inFeatures), outFeatures_(outFeatures) {
  IMERGE_CHECK(inFeatures > 0 && outFeatures > 0, "Linear: feature counts must be positive, got ",
               inFeatures, " -> ", outFeatures);
  weight_ = registerParameter("weight", Tensor::empty({outFeatures, inFeatures}));
  Tensor biasValue;
  if (bias) {
    biasValue = Tensor::empty({outFeatures});
    bias_ = registerParameter("bias", biasValue);
  }
  init::defaultLayerInit(weight_.tensor(), bias ? &biasValue : nullptr, generator);
}

Variable Linear::forward(const Variable& input) {
  runForwardPreHook();
  return autograd::linear(input, weight_, bias_);
}

std::string Linear::describe() const {
  return detail::concat("Linear(", inFeatures_, ", ", outFeatures_,
                        bias_.defined() ? "" : ", bias=false", ")");
}

}  // namespace imerge::layers
