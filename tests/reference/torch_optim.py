"""PyTorch reference for SGD: parameters after three steps with given gradients.

Run with /usr/bin/python3 (Debian's python3-torch); writes tests/reference/optim.json.
"""
import torch

from reference_common import make_case, write_reference

torch.manual_seed(0)
start = torch.randn(7)
grads = [torch.randn(7) for _ in range(3)]

configs = {
    "plain": dict(lr=0.1),
    "momentum": dict(lr=0.1, momentum=0.9),
    "nesterov": dict(lr=0.05, momentum=0.9, nesterov=True),
    "weight_decay": dict(lr=0.1, momentum=0.9, weight_decay=1e-2),
    "dampening": dict(lr=0.1, momentum=0.5, dampening=0.3, weight_decay=5e-4),
}

cases = {}
for name, config in configs.items():
    parameter = torch.nn.Parameter(start.clone())
    optimizer = torch.optim.SGD([parameter], **config)
    tensors = {"start": start}
    for step, grad in enumerate(grads):
        parameter.grad = grad.clone()
        optimizer.step()
        tensors["grad%d" % step] = grad
        tensors["after%d" % step] = parameter.detach().clone()
    options = {"lr": config["lr"], "momentum": config.get("momentum", 0.0),
               "dampening": config.get("dampening", 0.0),
               "weight_decay": config.get("weight_decay", 0.0),
               "nesterov": config.get("nesterov", False)}
    cases[name] = make_case(tensors, options)

write_reference("optim", cases)
