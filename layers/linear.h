// Linear: y = x weight^T + bias (PyTorch's nn.Linear).
#pragma once

#include "layers/module.h"

namespace imerge::layers {

class Linear : public Module {
 public:
  Linear(int64_t inFeatures, int64_t outFeatures, bool bias = true,
         Generator& generator = defaultGenerator());

  Variable forward(const Variable& input) override;  // [N, in] -> [N, out]
  std::string describe() const override;

  Variable& weight() { return weight_; }  // [out, in]
  Variable& bias() { return bias_; }      // [out], undefined without bias

 private:
  int64_t inFeatures_;
  int64_t outFeatures_;
  Variable weight_;
  Variable bias_;
};

}  // namespace imerge::layers
