"""Reference values for imerge's softmax cross-entropy, log-softmax and cross-entropy with
options (tests/autograd/loss_test.cpp).

Run with Debian's interpreter, which sees python3-torch:  /usr/bin/python3 tests/reference/torch_loss.py
The first cases hold logits [N, C], labels [N] (int64), PyTorch's mean cross-entropy `loss` [1]
and the gradient of that loss with respect to the logits, `grad_logits` [N, C]; the log_softmax_*
and ce_* cases below them are described where they are built.
"""
import torch
import torch.nn.functional as F

from reference_common import make_case, write_reference


def case(batch, classes, spread, seed):
    generator = torch.Generator().manual_seed(seed)
    logits = ((torch.rand(batch, classes, generator=generator) * 2 - 1) * spread).requires_grad_()
    labels = torch.randint(0, classes, (batch,), generator=generator, dtype=torch.int64)
    loss = F.cross_entropy(logits, labels)
    loss.backward()
    return make_case({"logits": logits, "labels": labels, "loss": loss.reshape(1),
                      "grad_logits": logits.grad},
                     {"batch": batch, "classes": classes, "spread": spread})


cases = {
    "n1_c2": case(1, 2, 1.0, 1),
    "n4_c3": case(4, 3, 2.0, 2),
    "n8_c10": case(8, 10, 3.0, 3),
    "n8_c50": case(8, 50, 1.0, 4),
    "n5_c7_large": case(5, 7, 50.0, 5),  # logits in [-50, 50]: exp overflows without the max shift
    "n32_c10_large": case(32, 10, 50.0, 6),
}


# ---- log_softmax over any dimension (tests/autograd/loss_test.cpp, LogSoftmaxReference) ----

def log_softmax_case(shape, dim, spread, seed):
    generator = torch.Generator().manual_seed(seed)
    x = ((torch.rand(*shape, generator=generator) * 2 - 1) * spread).requires_grad_()
    out = F.log_softmax(x, dim)
    grad_output = torch.randn(out.shape, generator=generator)
    out.backward(grad_output)
    return make_case({"input": x, "output": out, "grad_output": grad_output, "grad_input": x.grad},
                     {"dim": dim, "spread": spread})


# ---- cross_entropy with its options (tests/autograd/loss_test.cpp, CrossEntropyReference) ----
# "labels" may hold the ignore index; "weight" is present only for weighted cases; for
# reduction "none" the backward is seeded with "grad_loss", otherwise with 1.

def cross_entropy_case(batch, classes, seed, weighted=False, reduction="mean", ignore_index=-100,
                       ignored=(), label_smoothing=0.0, spread=3.0):
    generator = torch.Generator().manual_seed(seed)
    logits = ((torch.rand(batch, classes, generator=generator) * 2 - 1) * spread).requires_grad_()
    labels = torch.randint(0, classes, (batch,), generator=generator, dtype=torch.int64)
    for n in ignored:
        labels[n] = ignore_index
    weight = torch.rand(classes, generator=generator) * 2 + 0.25 if weighted else None
    loss = F.cross_entropy(logits, labels, weight=weight, ignore_index=ignore_index,
                           reduction=reduction, label_smoothing=label_smoothing)
    tensors = {"logits": logits, "labels": labels}
    if reduction == "none":
        grad_loss = torch.randn(loss.shape, generator=generator)
        loss.backward(grad_loss)
        tensors["grad_loss"] = grad_loss
    else:
        loss.backward()
        loss = loss.reshape(1)
    tensors.update({"loss": loss, "grad_logits": logits.grad})
    if weighted:
        tensors["weight"] = weight
    return make_case(tensors, {"reduction": reduction, "ignore_index": ignore_index,
                               "label_smoothing": label_smoothing, "weighted": weighted})


extra_cases = {
    "log_softmax_2d_dim1": log_softmax_case((4, 5), 1, 3.0, 11),
    "log_softmax_3d_dim0": log_softmax_case((3, 4, 5), 0, 3.0, 12),
    "log_softmax_3d_dim_minus2": log_softmax_case((3, 4, 5), -2, 3.0, 13),
    "log_softmax_4d_last": log_softmax_case((2, 3, 2, 6), -1, 3.0, 14),
    "log_softmax_1d": log_softmax_case((7,), 0, 3.0, 15),
    # Inputs of +-1000: exp overflows without the max shift, log(0) without log-sum-exp.
    "log_softmax_large": log_softmax_case((3, 6), 1, 1000.0, 16),

    "ce_weight_mean": cross_entropy_case(8, 5, 21, weighted=True),
    "ce_weight_sum": cross_entropy_case(8, 5, 22, weighted=True, reduction="sum"),
    "ce_none": cross_entropy_case(6, 4, 23, reduction="none"),
    "ce_weight_none": cross_entropy_case(6, 4, 24, weighted=True, reduction="none"),
    "ce_ignore_mean": cross_entropy_case(8, 5, 25, ignored=(1, 4)),
    "ce_ignore_weight_mean": cross_entropy_case(8, 5, 26, weighted=True, ignored=(0, 5, 6)),
    # An ignore index that is also a class: labels equal to it are ignored.
    "ce_ignore_class_index": cross_entropy_case(8, 4, 27, ignore_index=2, ignored=(3,)),
    "ce_ignore_sum": cross_entropy_case(6, 4, 28, reduction="sum", ignored=(2,)),
    "ce_smoothing_mean": cross_entropy_case(8, 5, 29, label_smoothing=0.1),
    "ce_smoothing_sum": cross_entropy_case(8, 5, 30, reduction="sum", label_smoothing=0.3),
    "ce_smoothing_weight_mean": cross_entropy_case(8, 5, 31, weighted=True, label_smoothing=0.2),
    # Smoothing, weights and ignored samples together: the mean divides both terms by the
    # weight of the samples not ignored (torch 1.13).
    "ce_smoothing_weight_ignore_mean": cross_entropy_case(8, 5, 32, weighted=True,
                                                          ignored=(2, 7), label_smoothing=0.25),
    "ce_smoothing_ignore_mean": cross_entropy_case(8, 5, 33, ignored=(0, 3),
                                                   label_smoothing=0.15),
    "ce_smoothing_weight_ignore_none": cross_entropy_case(6, 4, 34, weighted=True,
                                                          reduction="none", ignored=(1,),
                                                          label_smoothing=0.4),
    "ce_all_options_large": cross_entropy_case(8, 6, 35, weighted=True, ignored=(4,),
                                               label_smoothing=0.1, spread=50.0),
    "ce_default_options": cross_entropy_case(8, 10, 36),
}
cases.update(extra_cases)
write_reference("loss", cases)
