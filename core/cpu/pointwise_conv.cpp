#include "core/cpu/pointwise_conv.h"

#include "core/cpu/gemm.h"

namespace imerge::cpu {

bool pointwiseApplies(const Shape& weight, const Conv2dParams& params) {
  return weight.size() == 4 && weight[2] == 1 && weight[3] == 1 && params.groups == 1 &&
         params.stride == std::array<int64_t, 2>{1, 1} &&
         params.padding == std::array<int64_t, 2>{0, 0} && params.symmetric();
}

// Each image's product is one sgemm, threaded inside, so that a batch of one still uses every
// thread. (Sharing the images out among the threads, one product each, was not measured.)

Tensor pointwiseConv2dForward(const Tensor& input, const Tensor& weight, const Tensor& bias) {
  const int64_t batch = input.dim(0), inChannels = input.dim(1);
  const int64_t outChannels = weight.dim(0), plane = input.dim(2) * input.dim(3);
  Tensor output = Tensor::empty({batch, outChannels, input.dim(2), input.dim(3)});
  const float* x = input.data<float>();   // [N, C, H*W]
  const float* w = weight.data<float>();  // [K, C]
  float* y = output.data<float>();        // [N, K, H*W]
  for (int64_t n = 0; n < batch; ++n) {
    float* yImage = y + n * outChannels * plane;
    float beta = 0.0f;
    if (bias.defined()) {
      // The bias seeds the output and the product accumulates onto it.
      const float* b = bias.data<float>();
      for (int64_t k = 0; k < outChannels; ++k) {
        std::fill(yImage + k * plane, yImage + (k + 1) * plane, b[k]);
      }
      beta = 1.0f;
    }
    sgemm(Transpose::No, Transpose::No, outChannels, plane, inChannels, 1.0f, w, inChannels,
          x + n * inChannels * plane, plane, beta, yImage, plane);
  }
  return output;
}

Tensor pointwiseConv2dBackwardData(const Tensor& gradOutput, const Tensor& weight,
                                   const Shape& inputShape) {
  const int64_t batch = inputShape[0], inChannels = inputShape[1];
  const int64_t outChannels = weight.dim(0), plane = inputShape[2] * inputShape[3];
  Tensor gradInput = Tensor::empty(inputShape);
  const float* dy = gradOutput.data<float>();  // [N, K, H*W]
  const float* w = weight.data<float>();       // [K, C]
  float* dx = gradInput.data<float>();         // [N, C, H*W]
  for (int64_t n = 0; n < batch; ++n) {
    sgemm(Transpose::Yes, Transpose::No, inChannels, plane, outChannels, 1.0f, w, inChannels,
          dy + n * outChannels * plane, plane, 0.0f, dx + n * inChannels * plane, plane);
  }
  return gradInput;
}

Tensor pointwiseConv2dBackwardWeights(const Tensor& input, const Tensor& gradOutput,
                                      const Shape& weightShape) {
  const int64_t batch = input.dim(0), inChannels = input.dim(1);
  const int64_t outChannels = weightShape[0], plane = input.dim(2) * input.dim(3);
  Tensor gradWeight = Tensor::empty(weightShape);
  const float* x = input.data<float>();        // [N, C, H*W]
  const float* dy = gradOutput.data<float>();  // [N, K, H*W]
  float* dw = gradWeight.data<float>();        // [K, C]
  for (int64_t n = 0; n < batch; ++n) {
    sgemm(Transpose::No, Transpose::Yes, outChannels, inChannels, plane, 1.0f,
          dy + n * outChannels * plane, plane, x + n * inChannels * plane, plane,
          n == 0 ? 0.0f : 1.0f, dw, inChannels);
  }
  return gradWeight;
}

}  // namespace imerge::cpu
