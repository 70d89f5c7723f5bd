"""Shared writer for the PyTorch reference files that the C++ tests read.

Each torch_<family>.py script builds its cases with PyTorch (Debian's python3-torch, so run it
with /usr/bin/python3) and writes tests/reference/<family>.json in the format that
tests/support/reference_data.h documents. Keep the tensors small: the files are committed.
"""
import json
import os

import torch

HERE = os.path.dirname(os.path.abspath(__file__))


def tensor_entry(tensor):
    tensor = tensor.detach().contiguous()
    entry = {"shape": list(tensor.shape)}
    if tensor.dtype in (torch.int64, torch.int32):
        entry["dtype"] = "int64"
        entry["data"] = [int(v) for v in tensor.reshape(-1).tolist()]
    else:
        # repr of a Python float round-trips the float32 value exactly.
        entry["data"] = [float(v) for v in tensor.to(torch.float32).reshape(-1).tolist()]
    return entry


def make_case(tensors, options=None):
    case = {"tensors": {name: tensor_entry(t) for name, t in tensors.items()}}
    if options:
        case["options"] = options
    return case


def write_reference(family, cases):
    path = os.path.join(HERE, family + ".json")
    with open(path, "w") as out:
        json.dump({"generator": "tests/reference/torch_%s.py (torch %s)" % (family, torch.__version__),
                   "cases": cases}, out, separators=(",", ":"))
        out.write("\n")
    print("wrote", path)
