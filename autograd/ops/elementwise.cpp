// Elementwise, reduction, shape and dropout ops. Each forward computes its result with the
// core kernels and records, beside it, the closure that turns the output's gradient into its
// inputs' gradients. Closures capture only the tensors their backward needs. Each kernel call
// goes through a small helper below that asks the inputs' device for its kernels (backendFor).
#include "autograd/ops/elementwise.h"

#include "core/backend.h"
#include "core/broadcast.h"

namespace imerge::autograd {

namespace {
void checkFloat32(const char* op, const Variable& input) {
  IMERGE_CHECK(input.defined(), op, ": input is an undefined variable");
  IMERGE_CHECK(input.tensor().dtype() == DType::Float32, op, ": expects float32, got ",
               input.tensor().describe());
}

// Binary ops broadcast as NumPy and PyTorch do (core/broadcast.h); the shapes are checked here,
// before any device is asked, so every device refuses shapes that do not broadcast in the same
// words.
void checkBinary(const char* op, const Variable& a, const Variable& b) {
  IMERGE_CHECK(a.defined() && b.defined(), op, ": input is an undefined variable");
  IMERGE_CHECK(a.tensor().dtype() == DType::Float32 && b.tensor().dtype() == DType::Float32, op,
               ": expects float32, got ", a.tensor().describe(), " and ", b.tensor().describe());
  if (a.shape() != b.shape()) broadcastShapes(op, a.shape(), b.shape());
}

// The kernels of the inputs' device (the backward's gradients live where the forward ran).
// Equal shapes, by far the common case, take the plain kernels: no strides, no index arithmetic.
Tensor binaryKernel(BinaryOp op, const char* name, const Tensor& a, const Tensor& b) {
  const Backend& backend = backendFor(name, a, b);
  if (a.shape() != b.shape()) return backend.broadcastBinary(op, a, b);
  switch (op) {
    case BinaryOp::Add:
      return backend.add(a, b);
    case BinaryOp::Sub:
      return backend.sub(a, b);
    case BinaryOp::Mul:
      return backend.mul(a, b);
  }
  IMERGE_FAIL(name, ": unknown binary op");
}
// A broadcast input's gradient: the output's gradient summed over the dimensions broadcasting
// stretched, back to the input's shape. The identity (no copy) when nothing was broadcast.
Tensor reduceTo(const Tensor& gradient, const Shape& shape) {
  if (gradient.shape() == shape) return gradient;
  return backendFor("sumToShape", gradient).sumToShape(gradient, shape);
}
Tensor scaleKernel(const Tensor& a, float factor) {
  return backendFor("scale", a).scale(a, factor);
}
Tensor reluForwardKernel(const Tensor& input) {
  return backendFor("relu", input).reluForward(input);
}
Tensor reluBackwardKernel(const Tensor& gradOutput, const Tensor& output) {
  return backendFor("relu backward", gradOutput, output).reluBackward(gradOutput, output);
}
float sumAllKernel(const char* op, const Tensor& input) {
  return backendFor(op, input).sumAll(input);
}
}  // namespace

Variable add(const Variable& a, const Variable& b) {
  checkBinary("add", a, b);
  Tensor output = binaryKernel(BinaryOp::Add, "add", a.tensor(), b.tensor());
  // The same gradient goes to both inputs; addGrad copies before it accumulates in place, so
  // sharing the tensor is safe.
  return Variable(output, {a, b},
                  [shapeA = a.shape(), shapeB = b.shape()](std::vector<Variable>& inputs,
                                                           const Tensor& gradOutput) {
                    if (inputs[0].requiresGrad()) inputs[0].addGrad(reduceTo(gradOutput, shapeA));
                    if (inputs[1].requiresGrad()) inputs[1].addGrad(reduceTo(gradOutput, shapeB));
                  });
}

Variable sub(const Variable& a, const Variable& b) {
  checkBinary("sub", a, b);
  return Variable(binaryKernel(BinaryOp::Sub, "sub", a.tensor(), b.tensor()), {a, b},
                  [shapeA = a.shape(), shapeB = b.shape()](std::vector<Variable>& inputs,
                                                           const Tensor& gradOutput) {
                    if (inputs[0].requiresGrad()) inputs[0].addGrad(reduceTo(gradOutput, shapeA));
                    // Reduced first, then negated: the reduced gradient is the smaller one.
                    if (inputs[1].requiresGrad()) {
                      inputs[1].addGrad(scaleKernel(reduceTo(gradOutput, shapeB), -1.0f));
                    }
                  });
}

Variable mul(const Variable& a, const Variable& b) {
  checkBinary("mul", a, b);
  // The values are saved as they were at forward time (tensors share storage, so an in-place
  // update of a parameter before backward would change them, as in PyTorch without its check).
  return Variable(
      binaryKernel(BinaryOp::Mul, "mul", a.tensor(), b.tensor()), {a, b},
      [left = a.tensor(), right = b.tensor()](std::vector<Variable>& inputs,
                                              const Tensor& gradOutput) {
        // gradOutput has the broadcast shape; each factor broadcasts against it.
        if (inputs[0].requiresGrad()) {
          inputs[0].addGrad(reduceTo(binaryKernel(BinaryOp::Mul, "mul backward", gradOutput, right),
                                     left.shape()));
        }
        if (inputs[1].requiresGrad()) {
          inputs[1].addGrad(reduceTo(binaryKernel(BinaryOp::Mul, "mul backward", gradOutput, left),
                                     right.shape()));
        }
      });
}

Variable scale(const Variable& a, float factor) {
  checkFloat32("scale", a);
  return Variable(scaleKernel(a.tensor(), factor), {a},
                  [factor](std::vector<Variable>& inputs, const Tensor& gradOutput) {
                    inputs[0].addGrad(scaleKernel(gradOutput, factor));
                  });
}

Variable relu(const Variable& input) {
  checkFloat32("relu", input);
  Tensor output = reluForwardKernel(input.tensor());
  // The output, not the input, decides which gradients pass: it is needed anyway by the next
  // layer, so saving it costs no extra memory.
  return Variable(output, {input},
                  [output](std::vector<Variable>& inputs, const Tensor& gradOutput) {
                    inputs[0].addGrad(reluBackwardKernel(gradOutput, output));
                  });
}

Variable sum(const Variable& input) {
  checkFloat32("sum", input);
  Device& device = input.tensor().device();
  return Variable(
      Tensor::full({1}, sumAllKernel("sum", input.tensor()), device), {input},
      [shape = input.shape(), &device](std::vector<Variable>& inputs, const Tensor& gradOutput) {
        inputs[0].addGrad(Tensor::full(shape, gradOutput.item(), device));
      });
}

Variable mean(const Variable& input) {
  checkFloat32("mean", input);
  IMERGE_CHECK(input.numel() > 0, "mean: input ", input.tensor().describe(),
               " has no elements; its mean is undefined");
  const float count = static_cast<float>(input.numel());
  Device& device = input.tensor().device();
  return Variable(Tensor::full({1}, sumAllKernel("mean", input.tensor()) / count, device), {input},
                  [shape = input.shape(), count, &device](std::vector<Variable>& inputs,
                                                          const Tensor& gradOutput) {
                    inputs[0].addGrad(Tensor::full(shape, gradOutput.item() / count, device));
                  });
}

Variable reshape(const Variable& input, const Shape& shape) {
  IMERGE_CHECK(input.defined(), "reshape: input is an undefined variable");
  // Tensor::reshape names both shapes when the element counts differ.
  return Variable(
      input.tensor().reshape(shape), {input},
      [inputShape = input.shape()](std::vector<Variable>& inputs, const Tensor& gradOutput) {
        inputs[0].addGrad(gradOutput.reshape(inputShape));
      });
}

Variable flatten(const Variable& input) {
  IMERGE_CHECK(input.defined(), "flatten: input is an undefined variable");
  IMERGE_CHECK(input.tensor().ndim() >= 1, "flatten: input ", input.tensor().describe(),
               " needs a batch dimension [N, ...]");
  int64_t rest = 1;
  for (int d = 1; d < input.tensor().ndim(); ++d) rest *= input.dim(d);
  return reshape(input, {input.dim(0), rest});
}

Variable dropout(const Variable& input, float p, bool training, Generator& generator) {
  checkFloat32("dropout", input);
  IMERGE_CHECK(p >= 0.0f && p <= 1.0f, "dropout: probability p = ", p, " is outside [0, 1]");
  // The identity adds no node, so evaluation and p = 0 cost nothing and draw no random numbers.
  if (!training || p == 0.0f) return input;
  // Each device draws its mask its own way (serially on the CPU, from one seed on a GPU), so the
  // masks of one seed differ between devices; the forward and the backward share one.
  const Backend& backend = backendFor("dropout", input.tensor());
  Tensor mask = backend.dropoutMask(input.shape(), p, generator, input.tensor().device());
  return Variable(backend.mul(input.tensor(), mask), {input},
                  [mask, &backend](std::vector<Variable>& inputs, const Tensor& gradOutput) {
                    inputs[0].addGrad(backend.mul(gradOutput, mask));
                  });
}

}  // namespace imerge::autograd
