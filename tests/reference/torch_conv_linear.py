"""Reference values for conv2d, linear and matmul, forward and backward.

Run with Debian's interpreter (plain python3 may not import torch):
    /usr/bin/python3 tests/reference/torch_conv_linear.py
Each case stores the operands, the upstream gradient "grad_output" fed to out.backward(), the
output and every operand's gradient. Shapes are small so the JSON file stays small.
"""
import torch
import torch.nn.functional as F

from reference_common import make_case, write_reference

torch.manual_seed(20240601)


def conv_case(input_shape, weight_shape, stride=1, padding=0, dilation=1, groups=1, bias=True):
    x = torch.randn(*input_shape, requires_grad=True)
    w = torch.randn(*weight_shape, requires_grad=True)
    b = torch.randn(weight_shape[0], requires_grad=True) if bias else None
    out = F.conv2d(x, w, b, stride=stride, padding=padding, dilation=dilation, groups=groups)
    grad_output = torch.randn_like(out)
    out.backward(grad_output)
    pair = lambda v: list(v) if isinstance(v, (tuple, list)) else [v, v]
    tensors = {"input": x, "weight": w, "grad_output": grad_output, "output": out,
               "grad_input": x.grad, "grad_weight": w.grad}
    if bias:
        tensors["bias"] = b
        tensors["grad_bias"] = b.grad
    return make_case(tensors, {"stride": pair(stride), "padding": pair(padding),
                               "dilation": pair(dilation), "groups": groups, "bias": bias})


def padded_conv_case(input_shape, weight_shape, padding, padding_end, stride=1, dilation=1,
                     groups=1):
    """conv2d with `padding` before {top, left} and `padding_end` after {bottom, right} the input
    (ONNX's pads), which F.conv2d cannot express: F.pad with zeros, then the convolution without
    padding. The input's gradient flows back through the pad."""
    x = torch.randn(*input_shape, requires_grad=True)
    w = torch.randn(*weight_shape, requires_grad=True)
    b = torch.randn(weight_shape[0], requires_grad=True)
    pads = (padding[1], padding_end[1], padding[0], padding_end[0])  # F.pad: last dim first
    out = F.conv2d(F.pad(x, pads), w, b, stride=stride, dilation=dilation, groups=groups)
    grad_output = torch.randn_like(out)
    out.backward(grad_output)
    pair = lambda v: list(v) if isinstance(v, (tuple, list)) else [v, v]
    return make_case({"input": x, "weight": w, "bias": b, "grad_output": grad_output,
                      "output": out, "grad_input": x.grad, "grad_weight": w.grad,
                      "grad_bias": b.grad},
                     {"stride": pair(stride), "padding": list(padding),
                      "padding_end": list(padding_end), "dilation": pair(dilation),
                      "groups": groups, "bias": True})


def linear_case(batch, in_features, out_features, bias=True):
    x = torch.randn(batch, in_features, requires_grad=True)
    w = torch.randn(out_features, in_features, requires_grad=True)
    b = torch.randn(out_features, requires_grad=True) if bias else None
    out = F.linear(x, w, b)
    grad_output = torch.randn_like(out)
    out.backward(grad_output)
    tensors = {"input": x, "weight": w, "grad_output": grad_output, "output": out,
               "grad_input": x.grad, "grad_weight": w.grad}
    if bias:
        tensors["bias"] = b
        tensors["grad_bias"] = b.grad
    return make_case(tensors, {"bias": bias})


def matmul_case(m, k, n):
    a = torch.randn(m, k, requires_grad=True)
    b = torch.randn(k, n, requires_grad=True)
    out = a @ b
    grad_output = torch.randn_like(out)
    out.backward(grad_output)
    return make_case({"a": a, "b": b, "grad_output": grad_output, "output": out,
                      "grad_a": a.grad, "grad_b": b.grad})


cases = {
    "conv_basic": conv_case((2, 3, 5, 5), (4, 3, 3, 3)),
    "conv_stride2_pad1": conv_case((2, 4, 6, 6), (5, 4, 3, 3), stride=2, padding=1),
    # 8 + 2 - 3 = 7 is not a multiple of 3: the last padded column is dropped.
    "conv_stride3_uneven": conv_case((1, 3, 8, 8), (4, 3, 3, 3), stride=3, padding=1),
    "conv_dilation2": conv_case((1, 3, 7, 7), (4, 3, 3, 3), padding=1, dilation=2),
    "conv_groups2": conv_case((2, 4, 5, 5), (6, 2, 3, 3), padding=1, groups=2),
    "conv_depthwise": conv_case((2, 4, 5, 5), (4, 1, 3, 3), padding=1, groups=4),
    "conv_depthwise_multiplier2": conv_case((1, 3, 5, 5), (6, 1, 3, 3), padding=1, groups=3),
    "conv_no_bias": conv_case((2, 3, 5, 5), (5, 3, 3, 3), padding=1, bias=False),
    "conv_1x1": conv_case((2, 8, 4, 4), (5, 8, 1, 1)),
    "conv_stem_7x7_s2_p3": conv_case((1, 3, 9, 9), (3, 3, 7, 7), stride=2, padding=3),
    "conv_non_square": conv_case((1, 3, 7, 10), (4, 3, 3, 2), stride=(2, 1), padding=(1, 0),
                                 dilation=(1, 2)),
    # Wide enough that oneDNN picks its blocked (16-channel) kernels, as real layers do.
    "conv_wide_channels": conv_case((1, 16, 4, 4), (16, 16, 2, 2)),
    "linear_bias": linear_case(3, 5, 4),
    "linear_no_bias": linear_case(4, 6, 3, bias=False),
    "linear_wide": linear_case(4, 24, 17),
    "matmul": matmul_case(3, 4, 5),
    # asymmetric padding: before {top, left}, after {bottom, right}
    "conv_pad_end_only": padded_conv_case((2, 3, 6, 6), (4, 3, 3, 3), (0, 0), (1, 2)),
    "conv_pad_mixed_stride2": padded_conv_case((1, 4, 7, 8), (5, 4, 3, 3), (1, 0), (0, 1),
                                               stride=2),
    # "same" padding of an even kernel, as TensorFlow/ONNX SAME_UPPER: 1 before, 2 after
    "conv_pad_same_upper_4x4": padded_conv_case((1, 3, 6, 6), (4, 3, 4, 4), (1, 1), (2, 2)),
    "conv_pad_mixed_dilation_groups": padded_conv_case((1, 4, 7, 7), (6, 2, 3, 3), (2, 0), (1, 3),
                                                       dilation=2, groups=2),
    # 3x3 stride 1: Winograd's shape, which it must leave to oneDNN (forced in the test)
    "conv_pad_mixed_3x3": padded_conv_case((1, 8, 5, 5), (8, 8, 3, 3), (1, 1), (0, 2)),
}

write_reference("conv_linear", cases)
