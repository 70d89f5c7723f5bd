#include "core/cpu/log_softmax.h"

#include <cmath>

#include "core/cpu/operand_checks.h"

namespace imerge::cpu {

namespace {

// [outer, size, inner] around `dim`: outer * inner lines of `size` elements, `inner` apart.
struct Lines {
  int64_t outer = 1, size = 1, inner = 1;
  int64_t count() const { return outer * inner; }
  // The offset of line `line`'s first element.
  int64_t start(int64_t line) const { return (line / inner) * size * inner + line % inner; }
};

Lines linesOf(const char* op, const Tensor& tensor, int64_t dim) {
  checkFloat32OnCpu(op, tensor);
  IMERGE_CHECK(dim >= 0 && dim < tensor.ndim(), op, ": dimension ", dim, " is out of range for ",
               tensor.describe());
  Lines lines;
  for (int64_t d = 0; d < dim; ++d) lines.outer *= tensor.dim(d);
  lines.size = tensor.dim(dim);
  for (int64_t d = dim + 1; d < tensor.ndim(); ++d) lines.inner *= tensor.dim(d);
  IMERGE_CHECK(lines.size > 0 || tensor.numel() == 0, op, ": dimension ", dim, " of ",
               tensor.describe(), " is empty");
  return lines;
}

}  // namespace

Tensor logSoftmaxForward(const Tensor& input, int64_t dim) {
  const Lines lines = linesOf("logSoftmax", input, dim);
  Tensor output = Tensor::empty(input.shape());
  if (input.numel() == 0) return output;
  const float* x = input.data<float>();  // [outer, size, inner]
  float* y = output.data<float>();       // [outer, size, inner]
  const int64_t size = lines.size, inner = lines.inner;
  const int64_t count = lines.count();
#pragma omp parallel for if (input.numel() > 32768) schedule(static)
  for (int64_t line = 0; line < count; ++line) {
    const int64_t start = lines.start(line);
    const float* in = x + start;
    float* out = y + start;
    float lineMax = in[0];
    for (int64_t k = 1; k < size; ++k) lineMax = std::fmax(lineMax, in[k * inner]);
    double total = 0;  // double: a long line of small exponentials keeps its digits
    for (int64_t k = 0; k < size; ++k) total += std::exp(in[k * inner] - lineMax);
    const float shift = lineMax + static_cast<float>(std::log(total));
    for (int64_t k = 0; k < size; ++k) out[k * inner] = in[k * inner] - shift;
  }
  return output;
}

Tensor logSoftmaxBackward(const Tensor& gradOutput, const Tensor& output, int64_t dim) {
  const Lines lines = linesOf("logSoftmax backward", output, dim);
  IMERGE_CHECK(gradOutput.defined() && gradOutput.dtype() == DType::Float32 &&
                   gradOutput.shape() == output.shape(),
               "logSoftmax backward: gradient of the output ",
               gradOutput.defined() ? gradOutput.describe() : std::string("(undefined)"),
               " does not match the output ", output.describe());
  Tensor gradInput = Tensor::empty(output.shape());
  if (output.numel() == 0) return gradInput;
  const float* y = output.data<float>();       // [outer, size, inner]
  const float* dy = gradOutput.data<float>();  // [outer, size, inner]
  float* dx = gradInput.data<float>();         // [outer, size, inner]
  const int64_t size = lines.size, inner = lines.inner;
  const int64_t count = lines.count();
#pragma omp parallel for if (output.numel() > 32768) schedule(static)
  for (int64_t line = 0; line < count; ++line) {
    const int64_t start = lines.start(line);
    double total = 0;
    for (int64_t k = 0; k < size; ++k) total += dy[start + k * inner];
    const float sum = static_cast<float>(total);
    for (int64_t k = 0; k < size; ++k) {
      const int64_t at = start + k * inner;
      dx[at] = dy[at] - std::exp(y[at]) * sum;
    }
  }
  return gradInput;
}

}  // namespace imerge::cpu
