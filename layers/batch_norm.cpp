#include "layers/batch_norm.h"

namespace imerge::layers {

BatchNorm2d::BatchNorm2d(int64_t channels, float eps, float momentum)
    : channels_(channels),
      eps_(eps),
      momentum_(momentum),
      weight_(registerParameter("weight", Tensor::full({channels}, 1.0f))),
      bias_(registerParameter("bias", Tensor::zeros({channels}))),
      runningMean_(registerBuffer("running_mean", Tensor::zeros({channels}))),
      runningVar_(registerBuffer("running_var", Tensor::full({channels}, 1.0f))),
      batchesTracked_(registerBuffer("num_batches_tracked", Tensor::zeros({1}, DType::Int64))) {}

Variable BatchNorm2d::forward(const Variable& input) {
  return normalise(input, /*reluAfter=*/false);
}

Variable BatchNorm2d::forwardRelu(const Variable& input) {
  return normalise(input, /*reluAfter=*/true);
}

Variable BatchNorm2d::normalise(const Variable& input, bool reluAfter) {
  runForwardPreHook();
  if (isTraining()) ++batchesTracked_.data<int64_t>()[0];
  const autograd::BatchNormOptions options{isTraining(), momentum_, eps_};
  return reluAfter
             ? autograd::batchNormRelu2d(input, weight_, bias_, runningMean_, runningVar_, options)
             : autograd::batchNorm2d(input, weight_, bias_, runningMean_, runningVar_, options);
}

std::string BatchNorm2d::describe() const {
  return detail::concat("BatchNorm2d(", channels_, ", eps=", eps_, ", momentum=", momentum_, ")");
}

}  // namespace imerge::layers
