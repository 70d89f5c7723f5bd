"""Reference values for imerge's softmax cross-entropy (tests/autograd/loss_test.cpp).

Run with Debian's interpreter, which sees python3-torch:  /usr/bin/python3 tests/reference/torch_loss.py
Each case holds logits [N, C], labels [N] (int64), PyTorch's mean cross-entropy `loss` [1] and
the gradient of that loss with respect to the logits, `grad_logits` [N, C].
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
write_reference("loss", cases)
