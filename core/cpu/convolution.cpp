#include "core/cpu/convolution.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <string>
#include <unordered_map>

#include "core/cpu/dnnl_context.h"
#include "core/cpu/pointwise_conv.h"
#include "core/cpu/winograd.h"

namespace imerge::cpu {

using dnnl::memory;
using Tag = memory::format_tag;

// ---- layout choice ------------------------------------------------------------------------

namespace {
ConvLayout layoutFromEnvironment() {
  const char* value = std::getenv("IMERGE_CONV_LAYOUT");
  if (value && std::strcmp(value, "plain") == 0) return ConvLayout::Plain;
  return ConvLayout::Blocked;
}

std::atomic<ConvLayout>& layoutSetting() {
  static std::atomic<ConvLayout> layout{layoutFromEnvironment()};
  return layout;
}
}  // namespace

ConvLayout convLayout() {
  return layoutSetting().load();
}
void setConvLayout(ConvLayout layout) {
  layoutSetting().store(layout);
}

namespace {
ConvAlgorithm algorithmFromEnvironment() {
  const char* value = std::getenv("IMERGE_CONV_ALGORITHM");
  if (value && std::strcmp(value, "direct") == 0) return ConvAlgorithm::Direct;
  if (value && std::strcmp(value, "winograd") == 0) return ConvAlgorithm::Winograd;
  return ConvAlgorithm::Auto;
}

std::atomic<ConvAlgorithm>& algorithmSetting() {
  static std::atomic<ConvAlgorithm> algorithm{algorithmFromEnvironment()};
  return algorithm;
}

// Below this many input or output channels oneDNN's direct kernels win: the transforms then
// cost more than the products they save (bench/conv_algorithms.cpp has the per-shape timings).
constexpr int64_t kWinogradMinChannels = 64;
// Nor with fewer 4x4 output tiles than this in the batch: the kernels' transform, 36 values per
// input and output channel at every call, is then shared by too few products (ResNet-18's 7x7
// layers at batch 8 have 32 tiles and ran 0.85x-1.00x of direct; 14x14 ones have 128 and ran
// 1.2x-1.3x, on 2026-12-07's AVX-512 machine).
constexpr int64_t kWinogradMinTiles = 64;

// 1x1 layers run as one sgemm per image from this many output elements per channel on: with
// thinner products oneDNN's blocked kernels win even with their reorders (ResNet-50 at batch 8,
// 2026-12-07: 1.2x-2.1x faster here at 56x56 and 28x28, 0.8x-1.2x at 14x14, 0.6x-1.3x at 7x7;
// bench/conv_algorithms.cpp).
constexpr int64_t kPointwiseMinPlane = 256;

// Which code computes a convolution.
enum class ConvKernel {
  OneDnn,     // oneDNN's (direct, or on AVX-512 its Winograd), reordering from and to NCHW
  Winograd,   // core/cpu/winograd.h
  Pointwise,  // 1x1 as matrix products, core/cpu/pointwise_conv.h
};

ConvKernel chooseKernel(const Shape& weight, const Conv2dParams& params, const Shape& output) {
  switch (algorithmSetting().load()) {
    case ConvAlgorithm::Direct:
      return ConvKernel::OneDnn;
    case ConvAlgorithm::Winograd:  // ours wherever they apply
      if (winogradApplies(weight, params)) return ConvKernel::Winograd;
      if (pointwiseApplies(weight, params)) return ConvKernel::Pointwise;
      return ConvKernel::OneDnn;
    case ConvAlgorithm::Auto:
      break;
  }
  if (winogradApplies(weight, params) && weight[0] >= kWinogradMinChannels &&
      weight[1] >= kWinogradMinChannels && winogradTileCount(output) >= kWinogradMinTiles) {
    return ConvKernel::Winograd;
  }
  if (pointwiseApplies(weight, params) && output[2] * output[3] >= kPointwiseMinPlane) {
    return ConvKernel::Pointwise;
  }
  return ConvKernel::OneDnn;
}
}  // namespace

ConvAlgorithm convAlgorithm() {
  return algorithmSetting().load();
}
void setConvAlgorithm(ConvAlgorithm algorithm) {
  algorithmSetting().store(algorithm);
}

// ---- shape checks -------------------------------------------------------------------------

namespace {
// An operand as error messages name it ("float32[2, 3, 8]") and the shape the checks need; the
// backward entry points know some operands only by shape.
struct Operand {
  std::string description;
  Shape shape;
};

Operand operand(const Tensor& tensor) {
  return {tensor.describe(), tensor.shape()};
}
Operand operand(const Shape& shape) {
  return {"float32" + shapeToString(shape), shape};
}

Shape checkedOutputShape(const Operand& input, const Operand& weight, const Conv2dParams& params) {
  IMERGE_CHECK(input.shape.size() == 4, "conv2d: input ", input.description,
               " must be 4-D [N, C, H, W]");
  IMERGE_CHECK(weight.shape.size() == 4, "conv2d: weight ", weight.description,
               " must be 4-D [C_out, C_in / groups, kH, kW]");
  const int64_t groups = params.groups;
  IMERGE_CHECK(groups >= 1, "conv2d: groups = ", groups, " must be at least 1");
  for (int axis = 0; axis < 2; ++axis) {
    IMERGE_CHECK(params.stride[axis] >= 1, "conv2d: stride ", params.stride[axis],
                 " must be at least 1");
    IMERGE_CHECK(params.dilation[axis] >= 1, "conv2d: dilation ", params.dilation[axis],
                 " must be at least 1");
    IMERGE_CHECK(params.padding[axis] >= 0, "conv2d: padding ", params.padding[axis],
                 " must not be negative");
    IMERGE_CHECK(params.end()[axis] >= 0, "conv2d: padding end ", params.end()[axis],
                 " must not be negative");
  }
  for (int64_t size : input.shape) {
    IMERGE_CHECK(size > 0, "conv2d: input ", input.description, " is empty");
  }
  for (int64_t size : weight.shape) {
    IMERGE_CHECK(size > 0, "conv2d: weight ", weight.description, " is empty");
  }
  const int64_t inChannels = input.shape[1];
  const int64_t outChannels = weight.shape[0];
  IMERGE_CHECK(inChannels % groups == 0, "conv2d: groups = ", groups,
               " does not divide the channels of input ", input.description);
  IMERGE_CHECK(outChannels % groups == 0, "conv2d: groups = ", groups,
               " does not divide the output channels of weight ", weight.description);
  IMERGE_CHECK(weight.shape[1] * groups == inChannels, "conv2d: input ", input.description, " has ",
               inChannels, " channels but weight ", weight.description, " with groups = ", groups,
               " expects ", weight.shape[1] * groups);
  Shape output{input.shape[0], outChannels, 0, 0};
  for (int axis = 0; axis < 2; ++axis) {
    const int64_t kernelSpan = params.dilation[axis] * (weight.shape[2 + axis] - 1) + 1;
    const int64_t padded = input.shape[2 + axis] + params.padding[axis] + params.end()[axis];
    // Written so that a negative numerator cannot round towards zero into a "valid" size.
    const int64_t size = padded >= kernelSpan ? (padded - kernelSpan) / params.stride[axis] + 1 : 0;
    IMERGE_CHECK(size > 0, "conv2d: output ", axis == 0 ? "height" : "width",
                 " would not be positive: input ", input.description, " with padding ",
                 params.padding[axis], params.symmetric() ? "" : " before and ",
                 params.symmetric() ? "" : std::to_string(params.end()[axis]) + " after",
                 " is smaller than the dilated kernel extent ", kernelSpan, " of weight ",
                 weight.description);
    output[2 + axis] = size;
  }
  return output;
}
}  // namespace

Shape conv2dOutputShape(const Tensor& input, const Tensor& weight, const Tensor& bias,
                        const Conv2dParams& params) {
  IMERGE_CHECK(input.dtype() == DType::Float32, "conv2d: input ", input.describe(),
               " must be float32");
  IMERGE_CHECK(weight.dtype() == DType::Float32, "conv2d: weight ", weight.describe(),
               " must be float32");
  const Shape output = checkedOutputShape(operand(input), operand(weight), params);
  if (bias.defined()) {
    IMERGE_CHECK(bias.dtype() == DType::Float32, "conv2d: bias ", bias.describe(),
                 " must be float32");
    IMERGE_CHECK(bias.ndim() == 1 && bias.dim(0) == output[1], "conv2d: bias ", bias.describe(),
                 " must be [", output[1], "] to match weight ", weight.describe());
  }
  return output;
}

// ---- oneDNN plumbing ----------------------------------------------------------------------

namespace {

constexpr auto kF32 = memory::data_type::f32;

// One convolution problem in oneDNN's terms, plus the text key its primitives are cached by.
struct Geometry {
  memory::dims src, weights, bias, dst;  // weights are 5-D (goihw) when groups > 1
  memory::dims strides, dilates, paddingLeft, paddingRight;
  Tag weightsTag;
  bool withBias;
  ConvLayout layout;
  // convolution_auto lets oneDNN run its own Winograd kernel where this CPU has one (AVX-512)
  // and it judges it faster; IMERGE_CONV_ALGORITHM=direct asks for the direct kernels only.
  dnnl::algorithm algorithm;
  // The most scratchpad oneDNN's Winograd may take before the direct kernels are used instead:
  // what our own Winograd's buffers would hold for this convolution.
  size_t winogradScratchpadBudget;
  std::string key;

  memory::desc plainSrc() const { return {src, kF32, Tag::nchw}; }
  memory::desc plainWeights() const { return {weights, kF32, weightsTag}; }
  memory::desc plainBias() const { return {bias, kF32, Tag::x}; }
  memory::desc plainDst() const { return {dst, kF32, Tag::nchw}; }
  // What the convolution primitives are built with: `any` lets oneDNN choose.
  memory::desc computeDesc(const memory::dims& dims, Tag plainTag) const {
    return {dims, kF32, layout == ConvLayout::Blocked ? Tag::any : plainTag};
  }
  memory::desc computeSrc() const { return computeDesc(src, Tag::nchw); }
  memory::desc computeWeights() const { return computeDesc(weights, weightsTag); }
  memory::desc computeDst() const { return computeDesc(dst, Tag::nchw); }
};

memory::dims toDims(const Shape& shape) {
  return memory::dims(shape.begin(), shape.end());
}

Geometry makeGeometry(const Shape& input, const Shape& weight, const Shape& output,
                      const Conv2dParams& params, bool withBias) {
  Geometry g;
  g.src = toDims(input);
  g.dst = toDims(output);
  const int64_t groups = params.groups;
  if (groups > 1) {
    g.weights = {groups, weight[0] / groups, weight[1], weight[2], weight[3]};
    g.weightsTag = Tag::goihw;
  } else {
    g.weights = toDims(weight);
    g.weightsTag = Tag::oihw;
  }
  g.bias = {weight[0]};
  g.strides = {params.stride[0], params.stride[1]};
  // oneDNN counts the zeros inserted between kernel taps: PyTorch's dilation - 1.
  g.dilates = {params.dilation[0] - 1, params.dilation[1] - 1};
  g.paddingLeft = {params.padding[0], params.padding[1]};
  // PyTorch drops rows that do not fit a whole stride; oneDNN wants the right padding that
  // makes its size formula exact, which can be less than the end padding asked for.
  for (int axis = 0; axis < 2; ++axis) {
    const int64_t kernelSpan = params.dilation[axis] * (weight[2 + axis] - 1) + 1;
    g.paddingRight.push_back((output[2 + axis] - 1) * params.stride[axis] + kernelSpan -
                             input[2 + axis] - params.padding[axis]);
  }
  g.withBias = withBias;
  g.layout = convLayout();
  g.algorithm = algorithmSetting().load() == ConvAlgorithm::Direct
                    ? dnnl::algorithm::convolution_direct
                    : dnnl::algorithm::convolution_auto;
  g.winogradScratchpadBudget = winogradBufferBytes(weight, output);
  g.key = shapeToString(input) + shapeToString(weight) + " s" + std::to_string(params.stride[0]) +
          "," + std::to_string(params.stride[1]) + " p" + std::to_string(params.padding[0]) + "," +
          std::to_string(params.padding[1]) + " e" + std::to_string(params.end()[0]) + "," +
          std::to_string(params.end()[1]) + " d" + std::to_string(params.dilation[0]) + "," +
          std::to_string(params.dilation[1]) + " g" + std::to_string(groups) +
          (withBias ? " bias" : " nobias") +
          (g.layout == ConvLayout::Blocked ? " blocked" : " plain") +
          (g.algorithm == dnnl::algorithm::convolution_direct ? " direct" : " auto");
  return g;
}

dnnl::primitive_attr userScratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

// A float32 tensor of at least `bytes` bytes, as raw memory for oneDNN: reordered copies and
// scratchpads come from our caching allocator like every other buffer.
Tensor rawBuffer(size_t bytes) {
  return Tensor::empty({static_cast<int64_t>((bytes + sizeof(float) - 1) / sizeof(float))});
}

memory wrap(const memory::desc& desc, const Tensor& tensor) {
  return memory(desc, dnnlEngine(), tensor.rawData());
}

// A built primitive and the scratchpad it needs per execution.
struct Step {
  dnnl::primitive primitive;
  memory::desc scratchpad;
  bool winograd = false;  // oneDNN chose its own Winograd kernel (convolution_auto)
};

bool isWinograd(const dnnl::primitive_desc_base& pd) {
  return std::string(pd.impl_info_str()).find("wino") != std::string::npos;
}

// The Step of a convolution primitive of type Primitive, built from its descriptor.
template <typename Primitive, typename PrimitiveDesc>
Step convolutionStep(const PrimitiveDesc& pd) {
  return Step{Primitive(pd), pd.scratchpad_desc(), isWinograd(pd)};
}

void run(const Step& step, std::unordered_map<int, memory> args) {
  Tensor scratchpad;  // [bytes / 4], alive until the primitive finished
  if (step.scratchpad.get_size() > 0) {
    scratchpad = rawBuffer(step.scratchpad.get_size());
    args.emplace(DNNL_ARG_SCRATCHPAD, wrap(step.scratchpad, scratchpad));
  }
  step.primitive.execute(dnnlStream(), args);
  dnnlStream().wait();
}

// Conversion between a plain tensor and the layout one primitive computes in; empty
// (no reorder, no copy) when oneDNN chose the plain layout itself.
struct Relayout {
  memory::desc plain;
  memory::desc compute;
  std::optional<Step> reorder;

  static Relayout build(const memory::desc& plain, const memory::desc& compute, bool toCompute) {
    Relayout relayout{plain, compute, std::nullopt};
    if (plain != compute) {
      const memory::desc& from = toCompute ? plain : compute;
      const memory::desc& to = toCompute ? compute : plain;
      dnnl::reorder::primitive_desc pd(dnnlEngine(), from, dnnlEngine(), to, userScratchpad());
      relayout.reorder = Step{dnnl::reorder(pd), pd.scratchpad_desc()};
    }
    return relayout;
  }

  // Memory in the compute layout holding `tensor`'s values; a reordered copy lives in `copy`.
  memory in(const Tensor& tensor, Tensor& copy) const {
    if (!reorder) return wrap(compute, tensor);
    copy = rawBuffer(compute.get_size());
    memory computeMemory = wrap(compute, copy);
    run(*reorder, {{DNNL_ARG_FROM, wrap(plain, tensor)}, {DNNL_ARG_TO, computeMemory}});
    return computeMemory;
  }

  // Memory in the compute layout for a primitive to write; `finish` moves it to `tensor`.
  memory out(Tensor& tensor, Tensor& staging) const {
    if (!reorder) return wrap(compute, tensor);
    staging = rawBuffer(compute.get_size());
    return wrap(compute, staging);
  }
  void finish(const memory& computed, Tensor& tensor) const {
    if (reorder) run(*reorder, {{DNNL_ARG_FROM, computed}, {DNNL_ARG_TO, wrap(plain, tensor)}});
  }
};

// make(algorithm) builds a primitive descriptor. With convolution_auto, oneDNN may pick its own
// Winograd kernel (AVX-512 only); when that one's scratchpad outgrows g's budget the direct
// kernels are used instead: without the bound, oneDNN's Winograd raised the peak RSS of
// ResNet-18 (32x32, batch 32) from 509 to 644 MiB and VGG-16's past PyTorch's
// (docs/performance.md).
template <typename MakeDesc>
auto boundedAuto(const Geometry& g, MakeDesc make) {
  auto pd = make(g.algorithm);
  if (g.algorithm == dnnl::algorithm::convolution_auto && isWinograd(pd) &&
      pd.scratchpad_desc().get_size() > g.winogradScratchpadBudget) {
    return make(dnnl::algorithm::convolution_direct);
  }
  return pd;
}

dnnl::convolution_forward::primitive_desc forwardPrimitiveDesc(const Geometry& g) {
  using dnnl::convolution_forward;
  return boundedAuto(g, [&](dnnl::algorithm algorithm) {
    const auto kind = dnnl::prop_kind::forward_training;
    std::optional<convolution_forward::desc> desc;
    if (g.withBias) {
      desc.emplace(kind, algorithm, g.computeSrc(), g.computeWeights(), g.plainBias(),
                   g.computeDst(), g.strides, g.dilates, g.paddingLeft, g.paddingRight);
    } else {
      desc.emplace(kind, algorithm, g.computeSrc(), g.computeWeights(), g.computeDst(), g.strides,
                   g.dilates, g.paddingLeft, g.paddingRight);
    }
    return convolution_forward::primitive_desc(*desc, userScratchpad(), dnnlEngine());
  });
}

struct ForwardEntry {
  Step convolution;
  Relayout src, weights, dst;
};

struct BackwardDataEntry {
  Step convolution;
  Relayout diffDst, weights, diffSrc;
};

struct BackwardWeightsEntry {
  Step convolution;
  Relayout src, diffDst, diffWeights;
};

ForwardEntry buildForward(const Geometry& g) {
  auto pd = forwardPrimitiveDesc(g);
  return {convolutionStep<dnnl::convolution_forward>(pd),
          Relayout::build(g.plainSrc(), pd.src_desc(), true),
          Relayout::build(g.plainWeights(), pd.weights_desc(), true),
          Relayout::build(g.plainDst(), pd.dst_desc(), false)};
}

BackwardDataEntry buildBackwardData(const Geometry& g) {
  // Backward primitives need the forward's description as a hint; it is built, not run.
  auto hint = forwardPrimitiveDesc(g);
  auto pd = boundedAuto(g, [&](dnnl::algorithm algorithm) {
    dnnl::convolution_backward_data::desc desc(algorithm, g.computeSrc(), g.computeWeights(),
                                               g.computeDst(), g.strides, g.dilates, g.paddingLeft,
                                               g.paddingRight);
    return dnnl::convolution_backward_data::primitive_desc(desc, userScratchpad(), dnnlEngine(),
                                                           hint);
  });
  return {convolutionStep<dnnl::convolution_backward_data>(pd),
          Relayout::build(g.plainDst(), pd.diff_dst_desc(), true),
          Relayout::build(g.plainWeights(), pd.weights_desc(), true),
          Relayout::build(g.plainSrc(), pd.diff_src_desc(), false)};
}

BackwardWeightsEntry buildBackwardWeights(const Geometry& g) {
  using dnnl::convolution_backward_weights;
  const auto hint = forwardPrimitiveDesc(g);
  // oneDNN keeps the source plain when it has too few channels to fill a vector block (a
  // network's first layer); the weight gradient then reads it plain too, as the forward does.
  const memory::desc src = hint.src_desc() == g.plainSrc() ? g.plainSrc() : g.computeSrc();
  auto pd = boundedAuto(g, [&](dnnl::algorithm algorithm) {
    std::optional<convolution_backward_weights::desc> desc;
    if (g.withBias) {
      desc.emplace(algorithm, src, g.computeWeights(), g.plainBias(), g.computeDst(), g.strides,
                   g.dilates, g.paddingLeft, g.paddingRight);
    } else {
      desc.emplace(algorithm, src, g.computeWeights(), g.computeDst(), g.strides, g.dilates,
                   g.paddingLeft, g.paddingRight);
    }
    return convolution_backward_weights::primitive_desc(*desc, userScratchpad(), dnnlEngine(),
                                                        hint);
  });
  return {convolutionStep<convolution_backward_weights>(pd),
          Relayout::build(g.plainSrc(), pd.src_desc(), true),
          Relayout::build(g.plainDst(), pd.diff_dst_desc(), true),
          Relayout::build(g.plainWeights(), pd.diff_weights_desc(), false)};
}

PrimitiveCache<ForwardEntry>& forwardCache() {
  static PrimitiveCache<ForwardEntry> cache;
  return cache;
}
PrimitiveCache<BackwardDataEntry>& backwardDataCache() {
  static PrimitiveCache<BackwardDataEntry> cache;
  return cache;
}
PrimitiveCache<BackwardWeightsEntry>& backwardWeightsCache() {
  static PrimitiveCache<BackwardWeightsEntry> cache;
  return cache;
}

// gradOutput in some compute layout, reordered at most once per layout per backward call.
struct DiffDstCopies {
  const Tensor& gradOutput;
  std::optional<memory::desc> layout;
  memory reordered;
  Tensor copy;  // [bytes / 4] in `layout`, when a reorder was needed

  memory get(const Relayout& relayout, Tensor& ownCopy) {
    if (!relayout.reorder) return wrap(relayout.compute, gradOutput);
    if (layout && *layout == relayout.compute) return reordered;
    memory result = relayout.in(gradOutput, ownCopy);
    if (!layout) {
      layout = relayout.compute;
      reordered = result;
      copy = ownCopy;
    }
    return result;
  }
};

const ForwardEntry& forwardEntry(const Geometry& g) {
  return forwardCache().getOrBuild("fwd " + g.key, [&] { return buildForward(g); });
}
const BackwardDataEntry& backwardDataEntry(const Geometry& g) {
  return backwardDataCache().getOrBuild("bwd_data " + g.key, [&] { return buildBackwardData(g); });
}
const BackwardWeightsEntry& backwardWeightsEntry(const Geometry& g) {
  return backwardWeightsCache().getOrBuild("bwd_weights " + g.key,
                                           [&] { return buildBackwardWeights(g); });
}

// In Auto, our Winograd gives way to oneDNN's own where oneDNN has one for this CPU (AVX-512)
// and picks it for the pass within the scratchpad bound (boundedAuto): on 2026-12-07's AVX-512
// machine that was faster on most such layers and passes (docs/performance.md). Elsewhere
// (AVX2) oneDNN never picks it.
ConvKernel passKernel(ConvKernel chosen, const Step& oneDnnStep) {
  const bool oneDnnWinograd =
      algorithmSetting().load() == ConvAlgorithm::Auto && oneDnnStep.winograd;
  return chosen == ConvKernel::Winograd && oneDnnWinograd ? ConvKernel::OneDnn : chosen;
}

void backwardData(const Geometry& g, DiffDstCopies& diffDst, const Tensor& weight,
                  Tensor& gradInput) {
  const BackwardDataEntry& entry = backwardDataEntry(g);
  Tensor diffDstCopy, weightsCopy, diffSrcStaging;
  memory diffDstMemory = diffDst.get(entry.diffDst, diffDstCopy);
  memory weightsMemory = entry.weights.in(weight, weightsCopy);
  memory diffSrcMemory = entry.diffSrc.out(gradInput, diffSrcStaging);
  run(entry.convolution, {{DNNL_ARG_DIFF_DST, diffDstMemory},
                          {DNNL_ARG_WEIGHTS, weightsMemory},
                          {DNNL_ARG_DIFF_SRC, diffSrcMemory}});
  entry.diffSrc.finish(diffSrcMemory, gradInput);
}

void backwardWeights(const Geometry& g, DiffDstCopies& diffDst, const Tensor& input,
                     Tensor& gradWeight, Tensor* gradBias) {
  const BackwardWeightsEntry& entry = backwardWeightsEntry(g);
  Tensor srcCopy, diffDstCopy, diffWeightsStaging;
  memory srcMemory = entry.src.in(input, srcCopy);
  memory diffDstMemory = diffDst.get(entry.diffDst, diffDstCopy);
  memory diffWeightsMemory = entry.diffWeights.out(gradWeight, diffWeightsStaging);
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, srcMemory},
                                       {DNNL_ARG_DIFF_DST, diffDstMemory},
                                       {DNNL_ARG_DIFF_WEIGHTS, diffWeightsMemory}};
  if (gradBias) args.emplace(DNNL_ARG_DIFF_BIAS, wrap(g.plainBias(), *gradBias));
  run(entry.convolution, std::move(args));
  entry.diffWeights.finish(diffWeightsMemory, gradWeight);
}

}  // namespace

// ---- public entry points ------------------------------------------------------------------

Tensor conv2dForward(const Tensor& input, const Tensor& weight, const Tensor& bias,
                     const Conv2dParams& params) {
  const Shape outputShape = conv2dOutputShape(input, weight, bias, params);
  const ConvKernel chosen = chooseKernel(weight.shape(), params, outputShape);
  if (chosen == ConvKernel::Pointwise) return pointwiseConv2dForward(input, weight, bias);
  const Geometry g =
      makeGeometry(input.shape(), weight.shape(), outputShape, params, bias.defined());
  const ForwardEntry& entry = forwardEntry(g);
  if (passKernel(chosen, entry.convolution) == ConvKernel::Winograd) {
    return winogradConv2dForward(input, weight, bias, params, outputShape);
  }

  Tensor output = Tensor::empty(outputShape);  // [N, C_out, H_out, W_out]
  // Reordered copies: src [N, C_in, H, W] and weights in the primitive's layout, dst likewise.
  Tensor srcCopy, weightsCopy, dstStaging;
  memory srcMemory = entry.src.in(input, srcCopy);
  memory weightsMemory = entry.weights.in(weight, weightsCopy);
  memory dstMemory = entry.dst.out(output, dstStaging);
  std::unordered_map<int, memory> args{
      {DNNL_ARG_SRC, srcMemory}, {DNNL_ARG_WEIGHTS, weightsMemory}, {DNNL_ARG_DST, dstMemory}};
  if (bias.defined()) args.emplace(DNNL_ARG_BIAS, wrap(g.plainBias(), bias));
  run(entry.convolution, std::move(args));
  entry.dst.finish(dstMemory, output);
  return output;
}

namespace {
// gradOutput [N, C, H, W] summed over N, H and W per channel -> [C]
Tensor biasGradient(const Tensor& gradOutput) {
  const int64_t batch = gradOutput.dim(0), channels = gradOutput.dim(1);
  const int64_t plane = gradOutput.dim(2) * gradOutput.dim(3);
  Tensor bias = Tensor::zeros({channels});  // [C]
  float* sums = bias.data<float>();
  const float* g = gradOutput.data<float>();
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      const float* values = g + (n * channels + c) * plane;
      float total = 0.0f;
#pragma omp simd reduction(+ : total)
      for (int64_t i = 0; i < plane; ++i) total += values[i];
      sums[c] += total;
    }
  }
  return bias;
}

// The backward entry points share this; `input` and `weight` are needed only for the
// gradients that read them (weight for the data gradient, input for the weight gradient).
Conv2dGrads backward(const Operand& inputOperand, const Tensor* input, const Operand& weightOperand,
                     const Tensor* weight, const Tensor& gradOutput, const Conv2dParams& params,
                     bool needInput, bool needWeight, bool needBias) {
  const Shape outputShape = checkedOutputShape(inputOperand, weightOperand, params);
  IMERGE_CHECK(gradOutput.dtype() == DType::Float32 && gradOutput.shape() == outputShape,
               "conv2d backward: gradOutput ", gradOutput.describe(), " must be float32",
               shapeToString(outputShape), " for input ", inputOperand.description, " and weight ",
               weightOperand.description);
  const Shape& inputShape = inputOperand.shape;
  const Shape& weightShape = weightOperand.shape;
  Conv2dGrads grads;
  DiffDstCopies diffDst{gradOutput, std::nullopt, memory(), Tensor()};

  const ConvKernel chosen = chooseKernel(weightShape, params, outputShape);
  if (needInput) {
    // The data gradient does not depend on the bias: one primitive serves both cases.
    const Geometry g = makeGeometry(inputShape, weightShape, outputShape, params, false);
    const ConvKernel kernel = chosen == ConvKernel::Pointwise
                                  ? chosen
                                  : passKernel(chosen, backwardDataEntry(g).convolution);
    if (kernel == ConvKernel::Winograd) {
      grads.input = winogradConv2dBackwardData(gradOutput, *weight, inputShape, params);
    } else if (kernel == ConvKernel::Pointwise) {
      grads.input = pointwiseConv2dBackwardData(gradOutput, *weight, inputShape);
    } else {
      grads.input = Tensor::empty(inputShape);  // [N, C_in, H, W]
      backwardData(g, diffDst, *weight, grads.input);
    }
  }
  bool oneDnnWeights = false;
  if (needWeight) {
    const Geometry g = makeGeometry(inputShape, weightShape, outputShape, params, needBias);
    const ConvKernel kernel = chosen == ConvKernel::Pointwise
                                  ? chosen
                                  : passKernel(chosen, backwardWeightsEntry(g).convolution);
    if (kernel == ConvKernel::Winograd) {
      grads.weight = winogradConv2dBackwardWeights(*input, gradOutput, weightShape, params);
    } else if (kernel == ConvKernel::Pointwise) {
      grads.weight = pointwiseConv2dBackwardWeights(*input, gradOutput, weightShape);
    } else {
      grads.weight = Tensor::empty(weightShape);                   // [C_out, C_in / groups, kH, kW]
      if (needBias) grads.bias = Tensor::empty({weightShape[0]});  // [C_out]
      backwardWeights(g, diffDst, *input, grads.weight, needBias ? &grads.bias : nullptr);
      oneDnnWeights = true;
    }
  }
  // The bias alone (a frozen weight) or beside a Winograd or pointwise weight gradient; oneDNN's
  // backward-weights computes it in the same pass.
  if (needBias && !oneDnnWeights) grads.bias = biasGradient(gradOutput);
  return grads;
}

void checkFloat(const char* name, const Tensor& tensor) {
  IMERGE_CHECK(tensor.dtype() == DType::Float32, "conv2d backward: ", name, " ", tensor.describe(),
               " must be float32");
}
}  // namespace

Conv2dGrads conv2dBackward(const Tensor& input, const Tensor& weight, const Tensor& gradOutput,
                           const Conv2dParams& params, bool needInput, bool needWeight,
                           bool needBias) {
  checkFloat("input", input);
  checkFloat("weight", weight);
  return backward(operand(input), &input, operand(weight), &weight, gradOutput, params, needInput,
                  needWeight, needBias);
}

Tensor conv2dBackwardData(const Tensor& gradOutput, const Tensor& weight, const Shape& inputShape,
                          const Conv2dParams& params) {
  checkFloat("weight", weight);
  return backward(operand(inputShape), nullptr, operand(weight), &weight, gradOutput, params, true,
                  false, false)
      .input;
}

Conv2dGrads conv2dBackwardWeights(const Tensor& input, const Tensor& gradOutput,
                                  const Shape& weightShape, bool withBias,
                                  const Conv2dParams& params) {
  checkFloat("input", input);
  return backward(operand(input), &input, operand(weightShape), nullptr, gradOutput, params, false,
                  true, withBias);
}

}  // namespace imerge::cpu
