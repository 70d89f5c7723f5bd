// BatchNorm2d over NCHW (PyTorch's nn.BatchNorm2d): batch statistics in training, running
// statistics in evaluation. Buffers: running_mean, running_var, num_batches_tracked.
#pragma once

#include "autograd/ops/normalization.h"
#include "layers/module.h"

namespace imerge::layers {

class BatchNorm2d : public Module {
 public:
  explicit BatchNorm2d(int64_t channels, float eps = 1e-5f, float momentum = 0.1f);

  Variable forward(const Variable& input) override;
  // relu(forward(input)) as one fused op (autograd::batchNormRelu2d), for the blocks that
  // follow a batch norm with relu.
  Variable forwardRelu(const Variable& input);
  std::string describe() const override;

  Variable& weight() { return weight_; }  // gamma [C], initialised to 1
  Variable& bias() { return bias_; }      // beta [C], initialised to 0
  Tensor& runningMean() { return runningMean_; }
  Tensor& runningVar() { return runningVar_; }

 private:
  int64_t channels_;
  float eps_;
  float momentum_;
  Variable weight_;
  Variable bias_;
  Tensor& runningMean_;
  Tensor& runningVar_;
  Tensor& batchesTracked_;  // int64 [1]; kept for PyTorch checkpoint compatibility

  Variable normalise(const Variable& input, bool reluAfter);
};

}  // namespace imerge::layers
