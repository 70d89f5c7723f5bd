#include "autograd/ops/normalization.h"

#include "autograd/grad_mode.h"
#include "core/cpu/batch_norm.h"
#include "core/cpu/lrn.h"
#include "core/cuda/batch_norm.h"
#include "core/cuda/lrn.h"
#include "core/device_dispatch.h"

namespace imerge::autograd {

namespace {

bool wantsGrad(const Variable& variable) {
  return variable.defined() && variable.requiresGrad();
}

// An undefined Variable stands for gamma = 1 or beta = 0; the kernels take undefined tensors.
Tensor tensorOrUndefined(const Variable& variable) {
  return variable.defined() ? variable.tensor() : Tensor();
}

// Hands each input that wants one its gradient (input, weight, bias).
void addGradients(std::vector<Variable>& inputs, const cpu::BatchNormGradients& gradients) {
  if (wantsGrad(inputs[0])) inputs[0].addGrad(gradients.input);
  if (wantsGrad(inputs[1])) inputs[1].addGrad(gradients.weight);
  if (wantsGrad(inputs[2])) inputs[2].addGrad(gradients.bias);
}

void checkRunningStatistic(const char* what, const Tensor& statistic, const Tensor& input) {
  IMERGE_CHECK(statistic.defined() && statistic.dtype() == DType::Float32 &&
                   statistic.ndim() == 1 && statistic.dim(0) == input.dim(1),
               "batchNorm2d: ", what, " ",
               statistic.defined() ? statistic.describe() : std::string("(undefined)"),
               " does not match ", input.dim(1), " channels of input ", input.describe());
}

}  // namespace

Variable batchNorm2d(const Variable& input, const Variable& weight, const Variable& bias,
                     Tensor& runningMean, Tensor& runningVar, const BatchNormOptions& options) {
  IMERGE_CHECK(input.defined(), "batchNorm2d: input is undefined");
  const Tensor& x = input.tensor();
  IMERGE_CHECK(x.dtype() == DType::Float32 && x.ndim() == 4, "batchNorm2d: input ", x.describe(),
               " must be float32 [N, C, H, W]");
  const Tensor gamma = tensorOrUndefined(weight);
  const Tensor beta = tensorOrUndefined(bias);
  const float eps = options.eps;
  const bool onCuda = runsOnCuda("batchNorm2d", x, gamma, beta, runningMean, runningVar);

  if (options.training) {
    // Without running statistics (PyTorch's track_running_stats=False) training still works.
    const bool tracksStatistics = runningMean.defined() || runningVar.defined();
    if (tracksStatistics) {
      checkRunningStatistic("running mean", runningMean, x);
      checkRunningStatistic("running variance", runningVar, x);
    }
    IMERGE_CHECK(x.dim(0) * x.dim(2) * x.dim(3) > 1, "batchNorm2d: input ", x.describe(),
                 " has one value per channel; training needs more than one to normalise");
    if (onCuda) {
      // The CUDA forward updates the running statistics itself and keeps, for its backward,
      // the inverse standard deviation cuDNN works with rather than the variance.
      cuda::BatchNormTrainingResult result = cuda::batchNormTrainingForward(
          x, gamma, beta, runningMean, runningVar, options.momentum, eps);
      return Variable(result.output, {input, weight, bias},
                      [x, gamma, mean = result.savedMean, invStd = result.savedInvStd, eps](
                          std::vector<Variable>& inputs, const Tensor& gradOutput) {
                        addGradients(inputs, cuda::batchNormTrainingBackward(gradOutput, x, gamma,
                                                                             mean, invStd, eps));
                      });
    }
    cpu::BatchNormTrainingResult result = cpu::batchNormTrainingForward(x, gamma, beta, eps);
    if (tracksStatistics) {
      cpu::updateRunningStatistics(runningMean, runningVar, result.mean, result.variance,
                                   options.momentum, x.dim(0) * x.dim(2) * x.dim(3));
    }
    return Variable(result.output, {input, weight, bias},
                    [x, gamma, mean = result.mean, variance = result.variance, eps](
                        std::vector<Variable>& inputs, const Tensor& gradOutput) {
                      addGradients(inputs, cpu::batchNormBackward(gradOutput, x, gamma, mean,
                                                                  variance, eps, true));
                    });
  }

  checkRunningStatistic("running mean", runningMean, x);
  checkRunningStatistic("running variance", runningVar, x);
  Tensor output =
      onCuda ? cuda::batchNormInferenceForward(x, gamma, beta, runningMean, runningVar, eps)
             : cpu::batchNormInferenceForward(x, gamma, beta, runningMean, runningVar, eps);
  // The running statistics may change before backward (another training step); keep the
  // values this forward used.
  const bool recordsGraph =
      GradMode::enabled() && (wantsGrad(input) || wantsGrad(weight) || wantsGrad(bias));
  Tensor mean = recordsGraph ? runningMean.clone() : Tensor();
  Tensor variance = recordsGraph ? runningVar.clone() : Tensor();
  return Variable(output, {input, weight, bias},
                  [x, gamma, mean, variance, eps, onCuda](std::vector<Variable>& inputs,
                                                          const Tensor& gradOutput) {
                    addGradients(inputs, onCuda ? cuda::batchNormInferenceBackward(
                                                      gradOutput, x, gamma, mean, variance, eps)
                                                : cpu::batchNormBackward(gradOutput, x, gamma, mean,
                                                                         variance, eps, false));
                  });
}

Variable localResponseNorm(const Variable& input, int64_t size, float alpha, float beta, float k) {
  IMERGE_CHECK(input.defined(), "localResponseNorm: input is undefined");
  const bool onCuda = runsOnCuda("localResponseNorm", input.tensor());
  const cpu::LrnParams params{size, alpha, beta, k};
  const bool recordsGraph = GradMode::enabled() && input.requiresGrad();
  cpu::LrnResult result = onCuda ? cuda::lrnForward(input.tensor(), params, recordsGraph)
                                 : cpu::lrnForward(input.tensor(), params, recordsGraph);
  return Variable(result.output, {input},
                  [x = input.tensor(), workspace = result.workspace, params, onCuda](
                      std::vector<Variable>& inputs, const Tensor& gradOutput) {
                    if (!inputs[0].requiresGrad()) return;
                    inputs[0].addGrad(onCuda ? cuda::lrnBackward(gradOutput, x, workspace, params)
                                             : cpu::lrnBackward(gradOutput, x, workspace, params));
                  });
}

}  // namespace imerge::autograd
