"""PyTorch reference values for pooling, batch normalisation and LRN (forward and backward).

Run with Debian's interpreter, which is the one that imports torch:
    /usr/bin/python3 tests/reference/torch_pool_norm.py
It writes tests/reference/pool_norm.json, read by tests/autograd/pooling_test.cpp and
tests/autograd/normalization_test.cpp. Every case stores the upstream gradient it used
("grad_output"), so the C++ side seeds its backward with the same tensor.
"""
import torch
import torch.nn.functional as F

from reference_common import make_case, write_reference

torch.manual_seed(20240607)


def distinct(shape, scale=2.0):
    # A random permutation of evenly spaced values: no ties, so max pooling has one winner
    # per window and both sides pick the same element.
    n = 1
    for size in shape:
        n *= size
    values = torch.randperm(n).float() / n * scale - scale / 2
    return values.reshape(shape)


def run_op(fn, x, *params):
    x = x.clone().requires_grad_(True)
    params = [p.clone().requires_grad_(True) for p in params]
    out = fn(x, *params)
    grad_output = torch.randn_like(out)
    out.backward(grad_output)
    return out, grad_output, x.grad, [p.grad for p in params]


def pool_case(kind, shape, kernel, stride, padding, ceil_mode=False, count_include_pad=True):
    x = distinct(shape)
    if kind == "max":
        fn = lambda t: F.max_pool2d(t, kernel, stride, padding, ceil_mode=ceil_mode)
    else:
        fn = lambda t: F.avg_pool2d(t, kernel, stride, padding, ceil_mode=ceil_mode,
                                    count_include_pad=count_include_pad)
    out, grad_output, grad_input, _ = run_op(fn, x)
    options = {"kernel": list(kernel), "stride": list(stride), "padding": list(padding),
               "ceil_mode": ceil_mode, "count_include_pad": count_include_pad}
    return make_case({"input": x, "output": out, "grad_output": grad_output,
                      "grad_input": grad_input}, options)


def padded_pool_case(kind, shape, kernel, stride, padding, padding_end, ceil_mode=False,
                     count_include_pad=True):
    """Pooling with `padding` before and `padding_end` after the input, which PyTorch's pooling
    cannot express: F.pad first (-inf for max, so padding never wins; zeros for average), then
    the pooling without padding. Counting the padding, the average of the padded input divides
    by the window as it lies in the padded input, both sides' padding included, which is ONNX's
    count_include_pad. Not counting it, the average is the window's sum over the number of real
    elements in it: the padded sums of the input over those of a tensor of ones."""
    x = distinct(shape)
    pads = (padding[1], padding_end[1], padding[0], padding_end[0])  # F.pad: last dim first
    if kind == "max":
        fn = lambda t: F.max_pool2d(F.pad(t, pads, value=float("-inf")), kernel, stride, 0,
                                    ceil_mode=ceil_mode)
    elif count_include_pad:
        fn = lambda t: F.avg_pool2d(F.pad(t, pads), kernel, stride, 0, ceil_mode=ceil_mode,
                                    count_include_pad=True)
    else:
        def fn(t):
            sums = F.avg_pool2d(F.pad(t, pads), kernel, stride, 0, ceil_mode=ceil_mode,
                                divisor_override=1)
            counts = F.avg_pool2d(F.pad(torch.ones_like(t), pads), kernel, stride, 0,
                                  ceil_mode=ceil_mode, divisor_override=1)
            return sums / counts
    out, grad_output, grad_input, _ = run_op(fn, x)
    options = {"kernel": list(kernel), "stride": list(stride), "padding": list(padding),
               "padding_end": list(padding_end), "ceil_mode": ceil_mode,
               "count_include_pad": count_include_pad}
    return make_case({"input": x, "output": out, "grad_output": grad_output,
                      "grad_input": grad_input}, options)


def adaptive_case(shape, output_size):
    x = distinct(shape)
    out, grad_output, grad_input, _ = run_op(lambda t: F.adaptive_avg_pool2d(t, output_size), x)
    return make_case({"input": x, "output": out, "grad_output": grad_output,
                      "grad_input": grad_input}, {"output_size": list(output_size)})


def batch_norm_case(shape, training, affine=True, momentum=0.1, eps=1e-5, relu=False):
    # relu: F.relu of the batch norm's output (imerge's fused batchNormRelu2d).
    channels = shape[1]
    x = torch.randn(shape) * 2.0 + 0.5
    weight = torch.rand(channels) + 0.5
    bias = torch.randn(channels)
    running_mean = torch.randn(channels) * 0.1
    running_var = torch.rand(channels) + 0.5
    rm, rv = running_mean.clone(), running_var.clone()
    after = F.relu if relu else (lambda t: t)
    if affine:
        fn = lambda t, w, b: after(F.batch_norm(t, rm, rv, w, b, training, momentum, eps))
        out, grad_output, grad_input, (grad_weight, grad_bias) = run_op(fn, x, weight, bias)
    else:
        fn = lambda t: after(F.batch_norm(t, rm, rv, None, None, training, momentum, eps))
        out, grad_output, grad_input, _ = run_op(fn, x)
    tensors = {"input": x, "running_mean": running_mean, "running_var": running_var,
               "output": out, "grad_output": grad_output, "grad_input": grad_input,
               "running_mean_after": rm, "running_var_after": rv}
    if affine:
        tensors.update({"weight": weight, "bias": bias, "grad_weight": grad_weight,
                        "grad_bias": grad_bias})
    return make_case(tensors, {"training": training, "affine": affine, "momentum": momentum,
                               "eps": eps, "relu": relu})


def lrn_case(shape, size, alpha, beta, k, scale):
    x = torch.randn(shape) * scale
    fn = lambda t: F.local_response_norm(t, size, alpha, beta, k)
    out, grad_output, grad_input, _ = run_op(fn, x)
    return make_case({"input": x, "output": out, "grad_output": grad_output,
                      "grad_input": grad_input},
                     {"size": size, "alpha": alpha, "beta": beta, "k": k})


cases = {
    # max pooling
    "maxpool_2x2_s2": pool_case("max", (1, 2, 8, 8), (2, 2), (2, 2), (0, 0)),
    "maxpool_3x3_s2_p1": pool_case("max", (1, 2, 9, 9), (3, 3), (2, 2), (1, 1)),  # ResNet stem
    "maxpool_3x3_s2_ceil": pool_case("max", (1, 2, 8, 8), (3, 3), (2, 2), (0, 0), ceil_mode=True),
    # ceil mode where the last window would start in the right padding and is dropped
    "maxpool_2x2_s2_p1_ceil": pool_case("max", (2, 2, 5, 5), (2, 2), (2, 2), (1, 1),
                                        ceil_mode=True),
    "maxpool_rect": pool_case("max", (1, 2, 7, 6), (3, 2), (2, 1), (1, 0)),
    # average pooling
    "avgpool_3x3_s2_p1_include": pool_case("avg", (1, 3, 7, 7), (3, 3), (2, 2), (1, 1)),
    "avgpool_3x3_s2_p1_exclude": pool_case("avg", (1, 3, 7, 7), (3, 3), (2, 2), (1, 1),
                                           count_include_pad=False),
    "avgpool_2x2_s2": pool_case("avg", (1, 2, 8, 8), (2, 2), (2, 2), (0, 0)),
    # ceil mode: PyTorch's include-pad divisor stops at the real padding, not the extra one
    "avgpool_3x3_s2_p1_ceil_include": pool_case("avg", (1, 3, 6, 6), (3, 3), (2, 2), (1, 1),
                                                ceil_mode=True),
    "avgpool_3x3_s2_p1_ceil_exclude": pool_case("avg", (1, 3, 6, 6), (3, 3), (2, 2), (1, 1),
                                                ceil_mode=True, count_include_pad=False),
    "avgpool_3x3_s2_ceil_include": pool_case("avg", (1, 2, 8, 8), (3, 3), (2, 2), (0, 0),
                                             ceil_mode=True),
    # adaptive average pooling
    "adaptive_6x6_to_1x1": adaptive_case((1, 3, 6, 6), (1, 1)),
    "adaptive_8x8_to_4x4": adaptive_case((1, 2, 8, 8), (4, 4)),
    "adaptive_5x5_to_3x3": adaptive_case((2, 2, 5, 5), (3, 3)),
    "adaptive_7x7_to_6x6": adaptive_case((1, 3, 7, 7), (6, 6)),
    "adaptive_7x5_to_3x2": adaptive_case((2, 2, 7, 5), (3, 2)),
    "adaptive_3x3_to_7x7": adaptive_case((1, 2, 3, 3), (7, 7)),
    # batch normalisation
    "bn_train": batch_norm_case((3, 3, 4, 4), training=True),
    "bn_train_momentum": batch_norm_case((3, 4, 3, 2), training=True, momentum=0.3, eps=1e-3),
    "bn_train_noaffine": batch_norm_case((3, 3, 4, 4), training=True, affine=False),
    "bn_eval": batch_norm_case((3, 3, 4, 4), training=False),
    # local response normalisation
    "lrn_alexnet": lrn_case((2, 8, 3, 3), 5, 1e-4, 0.75, 2.0, scale=20.0),
    "lrn_size5_strong": lrn_case((2, 7, 3, 3), 5, 0.5, 0.75, 1.0, scale=1.5),
    "lrn_size4": lrn_case((2, 7, 3, 3), 4, 0.5, 0.75, 1.0, scale=1.5),
    "lrn_size2": lrn_case((2, 5, 3, 3), 2, 0.3, 0.6, 1.5, scale=1.5),
    # asymmetric padding: padding before {top, left}, padding_end after {bottom, right}
    "maxpool_pad_end_only": padded_pool_case("max", (1, 2, 7, 8), (3, 3), (2, 2), (0, 0), (1, 1)),
    "maxpool_pad_begin_only": padded_pool_case("max", (2, 1, 6, 7), (2, 3), (2, 2), (1, 1), (0, 0)),
    "maxpool_pad_mixed_ceil": padded_pool_case("max", (1, 2, 7, 9), (3, 4), (2, 3), (1, 2), (0, 1),
                                               ceil_mode=True),
    "avgpool_pad_mixed_include": padded_pool_case("avg", (1, 2, 7, 8), (3, 3), (2, 2), (0, 1),
                                                  (1, 0)),
    "avgpool_pad_mixed_exclude": padded_pool_case("avg", (1, 2, 7, 8), (3, 3), (2, 2), (0, 1),
                                                  (1, 0), count_include_pad=False),
    "avgpool_pad_end_ceil_include": padded_pool_case("avg", (2, 1, 6, 7), (3, 2), (2, 2), (1, 0),
                                                     (0, 1), ceil_mode=True),
    "avgpool_pad_end_ceil_exclude": padded_pool_case("avg", (2, 1, 6, 7), (3, 2), (2, 2), (1, 0),
                                                     (0, 1), ceil_mode=True,
                                                     count_include_pad=False),
    # batch normalisation followed by relu (last, so the cases above keep their random draws)
    "bn_relu_train": batch_norm_case((3, 3, 4, 4), training=True, relu=True),
    "bn_relu_train_noaffine": batch_norm_case((2, 4, 3, 5), training=True, affine=False,
                                              relu=True),
    "bn_relu_eval": batch_norm_case((3, 3, 4, 4), training=False, relu=True),
}

write_reference("pool_norm", cases)
