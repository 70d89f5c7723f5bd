// Both kernels walk the broadcast shape as rows of its last dimension: the outer index of a
// row gives each operand's offset through its broadcast strides (0 on a stretched dimension),
// and the inner loop steps each operand by its last stride (0 or 1).
#include "core/cpu/broadcast.h"

#include <vector>

#include "core/broadcast.h"
#include "core/cpu/operand_checks.h"

namespace imerge::cpu {

namespace {

const char* opName(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add:
      return "add";
    case BinaryOp::Sub:
      return "sub";
    case BinaryOp::Mul:
      return "mul";
  }
  return "binary op";
}

// The offset, through `strides`, of the first element of row `row` of `shape` (rows run over
// the last dimension, so the dimensions before it are the row's coordinates).
int64_t rowOffset(int64_t row, const Shape& shape, const std::vector<int64_t>& strides) {
  int64_t offset = 0;
  for (size_t d = shape.size() - 1; d-- > 0;) {
    offset += (row % shape[d]) * strides[d];
    row /= shape[d];
  }
  return offset;
}

template <typename Function>
void broadcastLoop(const Tensor& a, const Tensor& b, Tensor& out, Function f) {
  const Shape& shape = out.shape();
  const float* x = a.data<float>();
  const float* y = b.data<float>();
  float* z = out.data<float>();
  if (shape.empty()) {  // 0-d: one element each
    z[0] = f(x[0], y[0]);
    return;
  }
  const std::vector<int64_t> stridesA = broadcastStrides(a.shape(), shape);
  const std::vector<int64_t> stridesB = broadcastStrides(b.shape(), shape);
  const int64_t length = shape.back();
  const int64_t rows = length == 0 ? 0 : out.numel() / length;
  const int64_t stepA = stridesA.back(), stepB = stridesB.back();
#pragma omp parallel for if (out.numel() > 32768) schedule(static)
  for (int64_t row = 0; row < rows; ++row) {
    const float* xRow = x + rowOffset(row, shape, stridesA);
    const float* yRow = y + rowOffset(row, shape, stridesB);
    float* zRow = z + row * length;
    for (int64_t i = 0; i < length; ++i) zRow[i] = f(xRow[i * stepA], yRow[i * stepB]);
  }
}

}  // namespace

Tensor broadcastBinary(BinaryOp op, const Tensor& a, const Tensor& b) {
  const char* name = opName(op);
  checkFloat32OnCpu(name, a);
  checkFloat32OnCpu(name, b);
  Tensor out = Tensor::empty(broadcastShapes(name, a.shape(), b.shape()));
  switch (op) {
    case BinaryOp::Add:
      broadcastLoop(a, b, out, [](float x, float y) { return x + y; });
      break;
    case BinaryOp::Sub:
      broadcastLoop(a, b, out, [](float x, float y) { return x - y; });
      break;
    case BinaryOp::Mul:
      broadcastLoop(a, b, out, [](float x, float y) { return x * y; });
      break;
  }
  return out;
}

Tensor sumToShape(const Tensor& input, const Shape& shape) {
  checkFloat32OnCpu("sumToShape", input);
  IMERGE_CHECK(broadcastsTo(shape, input.shape()), "sumToShape: ", shapeToString(shape),
               " does not broadcast to ", input.describe());
  Tensor out = Tensor::empty(shape);
  float* y = out.data<float>();
  const float* x = input.data<float>();
  const Shape& full = input.shape();
  if (full.empty()) {  // 0-d input; shape is 0-d too
    y[0] = x[0];
    return out;
  }
  std::vector<double> sums(static_cast<size_t>(out.numel()), 0.0);
  const std::vector<int64_t> strides = broadcastStrides(shape, full);
  const int64_t length = full.back();
  const int64_t rows = length == 0 ? 0 : input.numel() / length;
  const int64_t step = strides.back();
  for (int64_t row = 0; row < rows; ++row) {
    double* target = sums.data() + rowOffset(row, full, strides);
    const float* source = x + row * length;
    for (int64_t i = 0; i < length; ++i) target[i * step] += source[i];
  }
  for (size_t i = 0; i < sums.size(); ++i) y[i] = static_cast<float>(sums[i]);
  return out;
}

}  // namespace imerge::cpu
