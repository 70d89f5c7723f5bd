"""Reference values for imerge's broadcasting add, sub and mul (tests/autograd/elementwise_test.cpp).

Run with Debian's interpreter, which sees python3-torch:
    /usr/bin/python3 tests/reference/torch_elementwise.py
Each case holds the operands a and b, the upstream gradient "grad_output" fed to
out.backward(), the output and both operands' gradients (summed over the broadcast dimensions
by autograd, as imerge must).
"""
import torch

from reference_common import make_case, write_reference

torch.manual_seed(20261207)

OPS = {"add": torch.add, "sub": torch.sub, "mul": torch.mul}


def binary_case(op, shape_a, shape_b):
    a = torch.randn(*shape_a, requires_grad=True)
    b = torch.randn(*shape_b, requires_grad=True)
    out = OPS[op](a, b)
    grad_output = torch.randn_like(out)
    out.backward(grad_output)
    return make_case({"a": a, "b": b, "grad_output": grad_output, "output": out,
                      "grad_a": a.grad, "grad_b": b.grad}, {"op": op})


cases = {
    "add_row": binary_case("add", (2, 3), (3,)),                 # missing leading dimension
    "add_bias_nchw": binary_case("add", (2, 3, 4, 5), (1, 3, 1, 1)),  # a conv bias
    "add_smaller_first": binary_case("add", (3,), (2, 3)),        # a is the one stretched
    "add_both_stretch": binary_case("add", (4, 1, 3), (5, 1)),    # -> [4, 5, 3]
    "sub_outer": binary_case("sub", (2, 1), (1, 3)),              # both sides stretch
    "sub_scalar_like": binary_case("sub", (1,), (2, 3)),
    "sub_middle": binary_case("sub", (2, 3, 4), (2, 1, 4)),
    "mul_column": binary_case("mul", (3, 4), (3, 1)),
    "mul_both_stretch": binary_case("mul", (4, 1, 3), (5, 1)),
    "mul_rank4": binary_case("mul", (2, 1, 3, 1), (4, 1, 5)),    # -> [2, 4, 3, 5]
}
write_reference("elementwise", cases)
