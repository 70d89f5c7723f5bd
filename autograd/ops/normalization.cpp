#include "autograd/ops/normalization.h"

#include <utility>

#include "autograd/grad_mode.h"
#include "autograd/ops/elementwise.h"
#include "core/backend.h"

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
void addGradients(std::vector<Variable>& inputs, BatchNormGradients gradients) {
  if (wantsGrad(inputs[0])) inputs[0].addGrad(std::move(gradients.input));
  if (wantsGrad(inputs[1])) inputs[1].addGrad(std::move(gradients.weight));
  if (wantsGrad(inputs[2])) inputs[2].addGrad(std::move(gradients.bias));
}

void checkRunningStatistic(const char* what, const Tensor& statistic, const Tensor& input) {
  IMERGE_CHECK(statistic.defined() && statistic.dtype() == DType::Float32 &&
                   statistic.ndim() == 1 && statistic.dim(0) == input.dim(1),
               "batchNorm2d: ", what, " ",
               statistic.defined() ? statistic.describe() : std::string("(undefined)"),
               " does not match ", input.dim(1), " channels of input ", input.describe());
}

// batchNorm2d, and with reluAfter relu of it fused into the training kernels.
Variable normalise(const Variable& input, const Variable& weight, const Variable& bias,
                   Tensor& runningMean, Tensor& runningVar, const BatchNormOptions& options,
                   bool reluAfter) {
  IMERGE_CHECK(input.defined(), "batchNorm2d: input is undefined");
  const Tensor& x = input.tensor();
  IMERGE_CHECK(x.dtype() == DType::Float32 && x.ndim() == 4, "batchNorm2d: input ", x.describe(),
               " must be float32 [N, C, H, W]");
  const Tensor gamma = tensorOrUndefined(weight);
  const Tensor beta = tensorOrUndefined(bias);
  const float eps = options.eps;
  const Backend& backend = backendFor("batchNorm2d", x, gamma, beta, runningMean, runningVar);

  if (options.training) {
    // Without running statistics (PyTorch's track_running_stats=False) training still works.
    const bool tracksStatistics = runningMean.defined() || runningVar.defined();
    if (tracksStatistics) {
      checkRunningStatistic("running mean", runningMean, x);
      checkRunningStatistic("running variance", runningVar, x);
    }
    IMERGE_CHECK(x.dim(0) * x.dim(2) * x.dim(3) > 1, "batchNorm2d: input ", x.describe(),
                 " has one value per channel; training needs more than one to normalise");
    // The backend updates the running statistics (when tracked) and saves, for its own
    // backward, the batch statistics in the form that backward takes.
    if (reluAfter) {
      BatchNormTrainingOutput result = backend.batchNormReluTrainingForward(
          x, gamma, beta, runningMean, runningVar, options.momentum, eps);
      // The output decides which gradients pass relu, as in autograd::relu; the next layer
      // keeps it anyway.
      return Variable(
          result.output, {input, weight, bias},
          [x, gamma, output = result.output, mean = result.savedMean, spread = result.savedSpread,
           eps, &backend](std::vector<Variable>& inputs, const Tensor& gradOutput) {
            addGradients(inputs, backend.batchNormReluTrainingBackward(gradOutput, output, x, gamma,
                                                                       mean, spread, eps));
          });
    }
    BatchNormTrainingOutput result = backend.batchNormTrainingForward(
        x, gamma, beta, runningMean, runningVar, options.momentum, eps);
    return Variable(result.output, {input, weight, bias},
                    [x, gamma, mean = result.savedMean, spread = result.savedSpread, eps, &backend](
                        std::vector<Variable>& inputs, const Tensor& gradOutput) {
                      addGradients(inputs, backend.batchNormTrainingBackward(gradOutput, x, gamma,
                                                                             mean, spread, eps));
                    });
  }
  // Evaluation runs the two ops in turn: only the training kernels are fused.
  if (reluAfter) {
    return relu(normalise(input, weight, bias, runningMean, runningVar, options, false));
  }

  checkRunningStatistic("running mean", runningMean, x);
  checkRunningStatistic("running variance", runningVar, x);
  Tensor output = backend.batchNormInferenceForward(x, gamma, beta, runningMean, runningVar, eps);
  // The running statistics may change before backward (another training step); keep the
  // values this forward used.
  const bool recordsGraph =
      GradMode::enabled() && (wantsGrad(input) || wantsGrad(weight) || wantsGrad(bias));
  Tensor mean = recordsGraph ? runningMean.clone() : Tensor();
  Tensor variance = recordsGraph ? runningVar.clone() : Tensor();
  return Variable(output, {input, weight, bias},
                  [x, gamma, mean, variance, eps, &backend](std::vector<Variable>& inputs,
                                                            const Tensor& gradOutput) {
                    addGradients(inputs, backend.batchNormInferenceBackward(gradOutput, x, gamma,
                                                                            mean, variance, eps));
                  });
}

}  // namespace

Variable batchNorm2d(const Variable& input, const Variable& weight, const Variable& bias,
                     Tensor& runningMean, Tensor& runningVar, const BatchNormOptions& options) {
  return normalise(input, weight, bias, runningMean, runningVar, options, /*reluAfter=*/false);
}

Variable batchNormRelu2d(const Variable& input, const Variable& weight, const Variable& bias,
                         Tensor& runningMean, Tensor& runningVar, const BatchNormOptions& options) {
  return normalise(input, weight, bias, runningMean, runningVar, options, /*reluAfter=*/true);
}

Variable localResponseNorm(const Variable& input, int64_t size, float alpha, float beta, float k) {
  IMERGE_CHECK(input.defined(), "localResponseNorm: input is undefined");
  const Backend& backend = backendFor("localResponseNorm", input.tensor());
  const LrnParams params{size, alpha, beta, k};
  const bool recordsGraph = GradMode::enabled() && input.requiresGrad();
  LrnResult result = backend.lrnForward(input.tensor(), params, recordsGraph);
  return Variable(result.output, {input},
                  [x = input.tensor(), workspace = result.workspace, params, &backend](
                      std::vector<Variable>& inputs, const Tensor& gradOutput) {
                    if (!inputs[0].requiresGrad()) return;
                    inputs[0].addGrad(backend.lrnBackward(gradOutput, x, workspace, params));
                  });
}

}  // namespace imerge::autograd
