#include "core/cpu/lrn.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/cpu/dnnl_context.h"

namespace imerge::cpu {

namespace {

using dnnl::algorithm;
using dnnl::lrn_backward;
using dnnl::lrn_forward;
using dnnl::memory;
using dnnl::prop_kind;

// PyTorch's window around channel c: `before` channels below it and `after` above.
struct ChannelWindow {
  int64_t before;
  int64_t after;
};
ChannelWindow channelWindow(int64_t size) {
  return {size / 2, (size - 1) / 2};
}

bool useOneDnn(const LrnParams& params) {
  return params.size % 2 == 1;
}

memory::desc planeDesc(const Tensor& tensor) {
  const Shape& shape = tensor.shape();
  return memory::desc(memory::dims(shape.begin(), shape.end()), memory::data_type::f32,
                      memory::format_tag::nchw);
}

memory wrap(const memory::desc& desc, const Tensor& tensor) {
  return memory(desc, dnnlEngine(), tensor.rawData());
}

std::string lrnKey(const char* kind, const Tensor& input, const LrnParams& params) {
  return detail::concat(kind, " ", shapeToString(input.shape()), " n", params.size, " a",
                        params.alpha, " b", params.beta, " k", params.k);
}

struct ForwardEntry {
  lrn_forward::primitive_desc descriptor;
  lrn_forward primitive;
};
struct BackwardEntry {
  lrn_backward::primitive_desc descriptor;
  lrn_backward primitive;
};

ForwardEntry& forwardPrimitive(const Tensor& input, const LrnParams& params, prop_kind kind) {
  static PrimitiveCache<ForwardEntry> cache;
  const std::string key =
      detail::concat(lrnKey("lrn_fwd", input, params), " prop", static_cast<int>(kind));
  return cache.getOrBuild(key, [&] {
    lrn_forward::desc desc(kind, algorithm::lrn_across_channels, planeDesc(input), params.size,
                           params.alpha, params.beta, params.k);
    lrn_forward::primitive_desc descriptor(desc, dnnlEngine());
    return ForwardEntry{descriptor, lrn_forward(descriptor)};
  });
}

BackwardEntry& backwardPrimitive(const Tensor& input, const LrnParams& params) {
  static PrimitiveCache<BackwardEntry> cache;
  return cache.getOrBuild(lrnKey("lrn_bwd", input, params), [&] {
    const ForwardEntry& forward = forwardPrimitive(input, params, prop_kind::forward_training);
    lrn_backward::desc desc(algorithm::lrn_across_channels, planeDesc(input), planeDesc(input),
                            params.size, params.alpha, params.beta, params.k);
    lrn_backward::primitive_desc descriptor(desc, dnnlEngine(), forward.descriptor);
    return BackwardEntry{descriptor, lrn_backward(descriptor)};
  });
}

// scale[n, c, :] = k + alpha / size * sum over PyTorch's window of x^2, then
// out = x * scale^-beta. One image per task; channels of one image are planeSize apart.
void directForward(const Tensor& input, const LrnParams& params, Tensor& output, Tensor& scale) {
  const int64_t batch = input.dim(0), channels = input.dim(1);
  const int64_t planeSize = input.dim(2) * input.dim(3);
  const ChannelWindow window = channelWindow(params.size);
  const float alphaOverSize = params.alpha / static_cast<float>(params.size);
  const float* x = input.data<float>();  // [N, C, H*W]
  float* y = output.data<float>();       // [N, C, H*W]
  float* s = scale.data<float>();        // [N, C, H*W]
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      const float* xImage = x + n * channels * planeSize;
      float* sRow = s + (n * channels + c) * planeSize;
      std::fill(sRow, sRow + planeSize, 0.0f);
      const int64_t first = std::max<int64_t>(c - window.before, 0);
      const int64_t last = std::min<int64_t>(c + window.after, channels - 1);
      for (int64_t j = first; j <= last; ++j) {
        const float* xRow = xImage + j * planeSize;
#pragma omp simd
        for (int64_t i = 0; i < planeSize; ++i) sRow[i] += xRow[i] * xRow[i];
      }
      const float* xRow = xImage + c * planeSize;
      float* yRow = y + (n * channels + c) * planeSize;
      for (int64_t i = 0; i < planeSize; ++i) {
        sRow[i] = params.k + alphaOverSize * sRow[i];
        yRow[i] = xRow[i] * std::pow(sRow[i], -params.beta);
      }
    }
  }
}

// dx[j] = dy[j] * scale[j]^-beta
//         - 2 alpha beta / size * x[j] * sum over {c : j in window(c)} of dy[c] x[c]
//         scale[c]^(-beta-1)
// where j is in window(c) exactly when c runs from j - after to j + before.
void directBackward(const Tensor& gradOutput, const Tensor& input, const Tensor& scale,
                    const LrnParams& params, Tensor& gradInput) {
  const int64_t batch = input.dim(0), channels = input.dim(1);
  const int64_t planeSize = input.dim(2) * input.dim(3);
  const ChannelWindow window = channelWindow(params.size);
  const float factor = 2.0f * params.alpha * params.beta / static_cast<float>(params.size);
  const float* x = input.data<float>();        // [N, C, H*W]
  const float* dy = gradOutput.data<float>();  // [N, C, H*W]
  const float* s = scale.data<float>();        // [N, C, H*W]
  float* dx = gradInput.data<float>();         // [N, C, H*W]
#pragma omp parallel
  {
    std::vector<float> through(channels * planeSize);  // [C, H*W]: dy x scale^(-beta-1)
#pragma omp for schedule(static)
    for (int64_t n = 0; n < batch; ++n) {
      const int64_t image = n * channels * planeSize;
      for (int64_t i = 0; i < channels * planeSize; ++i) {
        through[i] = dy[image + i] * x[image + i] * std::pow(s[image + i], -params.beta - 1.0f);
      }
      for (int64_t j = 0; j < channels; ++j) {
        const int64_t row = image + j * planeSize;
        for (int64_t i = 0; i < planeSize; ++i) {
          dx[row + i] = dy[row + i] * std::pow(s[row + i], -params.beta);
        }
        const int64_t first = std::max<int64_t>(j - window.after, 0);
        const int64_t last = std::min<int64_t>(j + window.before, channels - 1);
        for (int64_t c = first; c <= last; ++c) {
          const float* throughRow = through.data() + c * planeSize;
#pragma omp simd
          for (int64_t i = 0; i < planeSize; ++i) {
            dx[row + i] -= factor * x[row + i] * throughRow[i];
          }
        }
      }
    }
  }
}

}  // namespace

void checkLrnInput(const char* op, const Tensor& input, const LrnParams& params) {
  IMERGE_CHECK(input.defined() && input.dtype() == DType::Float32 && input.ndim() == 4, op,
               ": input ", input.defined() ? input.describe() : std::string("(undefined)"),
               " must be float32 [N, C, H, W]");
  IMERGE_CHECK(params.size > 0, op, ": size ", params.size, " must be positive (input ",
               input.describe(), ")");
}

LrnResult lrnForward(const Tensor& input, const LrnParams& params, bool keepWorkspace) {
  checkLrnInput("localResponseNorm", input, params);
  LrnResult result;
  result.output = Tensor::emptyLike(input);
  if (!useOneDnn(params)) {
    // The scale is the workspace; compute it even for inference, it is the forward's work.
    Tensor scale = Tensor::emptyLike(input);
    directForward(input, params, result.output, scale);
    if (keepWorkspace) result.workspace = scale;
    return result;
  }
  const prop_kind kind = keepWorkspace ? prop_kind::forward_training : prop_kind::forward_inference;
  ForwardEntry& entry = forwardPrimitive(input, params, kind);
  std::unordered_map<int, memory> arguments = {
      {DNNL_ARG_SRC, wrap(entry.descriptor.src_desc(), input)},
      {DNNL_ARG_DST, wrap(entry.descriptor.dst_desc(), result.output)}};
  if (keepWorkspace) {
    // Opaque bytes in a float32 tensor, so they come from the caching allocator.
    const memory::desc workspaceDesc = entry.descriptor.workspace_desc();
    const int64_t words = static_cast<int64_t>((workspaceDesc.get_size() + 3) / 4);
    result.workspace = Tensor::empty({std::max<int64_t>(words, 1)});
    arguments.emplace(DNNL_ARG_WORKSPACE, wrap(workspaceDesc, result.workspace));
  }
  entry.primitive.execute(dnnlStream(), arguments);
  dnnlStream().wait();
  return result;
}

Tensor lrnBackward(const Tensor& gradOutput, const Tensor& input, const Tensor& workspace,
                   const LrnParams& params) {
  checkLrnInput("localResponseNorm backward", input, params);
  IMERGE_CHECK(gradOutput.defined() && gradOutput.shape() == input.shape() &&
                   gradOutput.dtype() == DType::Float32,
               "localResponseNorm backward: gradient of the output ",
               gradOutput.defined() ? gradOutput.describe() : std::string("(undefined)"),
               " does not match input ", input.describe());
  IMERGE_CHECK(workspace.defined(), "localResponseNorm backward: no workspace for input ",
               input.describe(), "; run the forward with keepWorkspace");
  Tensor gradInput = Tensor::emptyLike(input);
  if (!useOneDnn(params)) {
    directBackward(gradOutput, input, workspace, params, gradInput);
    return gradInput;
  }
  BackwardEntry& entry = backwardPrimitive(input, params);
  entry.primitive.execute(
      dnnlStream(), {{DNNL_ARG_SRC, wrap(entry.descriptor.src_desc(), input)},
                     {DNNL_ARG_DIFF_DST, wrap(entry.descriptor.diff_dst_desc(), gradOutput)},
                     {DNNL_ARG_DIFF_SRC, wrap(entry.descriptor.diff_src_desc(), gradInput)},
                     {DNNL_ARG_WORKSPACE, wrap(entry.descriptor.workspace_desc(), workspace)}});
  dnnlStream().wait();
  return gradInput;
}

}  // namespace imerge::cpu
