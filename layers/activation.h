// Parameter-free layers that wrap one op: ReLU, Flatten, Dropout, LocalResponseNorm.
#pragma once

#include "autograd/ops/elementwise.h"
#include "autograd/ops/normalization.h"
#include "layers/module.h"

namespace imerge::layers {

class ReLU : public Module {
 public:
  Variable forward(const Variable& input) override { return autograd::relu(input); }
  std::string describe() const override { return "ReLU()"; }
};

// [N, ...] -> [N, product of the rest]
class Flatten : public Module {
 public:
  Variable forward(const Variable& input) override { return autograd::flatten(input); }
  std::string describe() const override { return "Flatten()"; }
};

// Zeroes elements with probability p in training (scaling the rest by 1/(1-p)); the identity
// in evaluation.
class Dropout : public Module {
 public:
  explicit Dropout(float p = 0.5f, Generator& generator = defaultGenerator());
  Variable forward(const Variable& input) override {
    return autograd::dropout(input, p_, isTraining(), *generator_);
  }
  std::string describe() const override { return detail::concat("Dropout(p=", p_, ")"); }

 private:
  float p_;
  Generator* generator_;
};

// Across channels, as in AlexNet (PyTorch's nn.LocalResponseNorm).
class LocalResponseNorm : public Module {
 public:
  explicit LocalResponseNorm(int64_t size, float alpha = 1e-4f, float beta = 0.75f, float k = 1.0f);
  Variable forward(const Variable& input) override {
    return autograd::localResponseNorm(input, size_, alpha_, beta_, k_);
  }
  std::string describe() const override {
    return detail::concat("LocalResponseNorm(", size_, ", alpha=", alpha_, ", beta=", beta_,
                          ", k=", k_, ")");
  }

 private:
  int64_t size_;
  float alpha_;
  float beta_;
  float k_;
};

}  // namespace imerge::layers
