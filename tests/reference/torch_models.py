"""PyTorch side of the model-zoo tests (tests/models/model_zoo_test.cpp).

Run with Debian's interpreter, the one that imports torch and torchvision:

    /usr/bin/python3 tests/reference/torch_models.py --counts
        Writes tests/reference/model_zoo.json: for every registered model and configuration,
        the parameter count, the gradient tensor count and a hash of the parameters' names and
        shapes in order, all taken from the PyTorch definition (torchvision's where it has one).

    /usr/bin/python3 tests/reference/torch_models.py --weights FILE --model NAME --out OUT \
        [--in-channels C] [--classes K] [--small]
        Loads the parameters, buffers and input batch that the C++ test wrote to FILE into the
        PyTorch model by name (every name must match, both ways, and parameters must come in
        the same order), computes the logits in eval mode and writes them to OUT.

    /usr/bin/python3 tests/reference/torch_models.py --batch MANIFEST
        The same for every case of a JSON list of {"weights", "model", "out", "in_channels",
        "classes", "small"}: one interpreter start (~3 s of importing torch) for all of them.

FILE and OUT use one little-endian format: b"IMTS", uint32 count, then per tensor a kind byte
(b"i" input, b"p" parameter, b"b" buffer, b"o" output), uint32 name length, the UTF-8 name,
uint32 ndim, int64 sizes, float32 data. Weights are exchanged at test time, never committed.

The PyTorch definitions: torchvision's AlexNet, VGG and ResNet for the ImageNet stem (first
convolution swapped when the input has other than 3 channels); the small-image variants are
the same torchvision models edited as models/alexnet.h, models/vgg.h and models/resnet.h
describe; the CIFAR ResNets (option B shortcuts) and small_cnn are defined here.
"""
import argparse
import json
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
INSTALL_HINT = ("run `apt-get install python3-torch python3-torchvision` and use Debian's "
                "/usr/bin/python3 (docs/design.md section 8)")

try:
    import torch
    import torch.nn as nn
    import torchvision
except ImportError as error:  # the C++ test shows this text in its failure
    sys.stderr.write("torch_models.py: cannot import torch/torchvision under %s (%s); %s\n"
                     % (sys.executable, error, INSTALL_HINT))
    sys.exit(3)

IMAGENET_MODELS = (["alexnet"] + ["vgg%d%s" % (d, bn) for d in (11, 13, 16, 19) for bn in ("", "_bn")]
                   + ["resnet%d" % d for d in (18, 34, 50, 101, 152)])
CIFAR_RESNETS = [20, 32, 44, 56, 110]


# ---- PyTorch definitions ------------------------------------------------------------------

class CifarResNet(nn.Module):
    """He et al.'s CIFAR ResNet with option B (projection) shortcuts: torchvision's BasicBlock
    with widths 16, 32, 64 and a 3x3 stride-1 stem, as models/cifar_resnet.h."""

    def __init__(self, depth, in_channels, classes):
        super().__init__()
        blocks = (depth - 2) // 6
        self.conv1 = nn.Conv2d(in_channels, 16, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        self.relu = nn.ReLU(inplace=True)
        in_planes = 16
        for index, planes in enumerate((16, 32, 64)):
            layer = []
            for block in range(blocks):
                stride = 2 if (block == 0 and index > 0) else 1
                downsample = None
                if stride != 1 or in_planes != planes:
                    downsample = nn.Sequential(nn.Conv2d(in_planes, planes, 1, stride, bias=False),
                                               nn.BatchNorm2d(planes))
                layer.append(torchvision.models.resnet.BasicBlock(in_planes, planes, stride,
                                                                  downsample))
                in_planes = planes
            setattr(self, "layer%d" % (index + 1), nn.Sequential(*layer))
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(64, classes)

    def forward(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        x = self.layer3(self.layer2(self.layer1(x)))
        return self.fc(torch.flatten(self.avgpool(x), 1))


def small_cnn(in_channels, classes):
    # models/small_cnn.h
    return nn.Sequential(
        nn.Conv2d(in_channels, 32, 3, 1, 1, bias=False), nn.BatchNorm2d(32), nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, 1, 1, bias=False), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Dropout(0.25),
        nn.Linear(128, classes))


def replace_first_conv(conv, in_channels, kernel=None, stride=None, padding=None):
    return nn.Conv2d(in_channels, conv.out_channels,
                     kernel if kernel is not None else conv.kernel_size,
                     stride if stride is not None else conv.stride,
                     padding if padding is not None else conv.padding,
                     bias=conv.bias is not None)


def build(name, in_channels, classes, small):
    if name == "small_cnn":
        return small_cnn(in_channels, classes)
    if name.startswith("resnet") and int(name[6:]) in CIFAR_RESNETS:
        return CifarResNet(int(name[6:]), in_channels, classes)
    if name not in IMAGENET_MODELS:
        raise SystemExit("torch_models.py: unknown model %r" % name)
    model = getattr(torchvision.models, name)(weights=None, num_classes=classes)
    if name == "alexnet":
        if small:  # models/alexnet.h: 3x3/1 stem, 2x2 ceil-mode pools, 2x2 avgpool
            model.features[0] = replace_first_conv(model.features[0], in_channels, 3, 1, 1)
            for index in (2, 5, 12):
                model.features[index] = nn.MaxPool2d(2, 2, ceil_mode=True)
            model.avgpool = nn.AdaptiveAvgPool2d((2, 2))
            model.classifier[1] = nn.Linear(256 * 2 * 2, 4096)
        elif in_channels != 3:
            model.features[0] = replace_first_conv(model.features[0], in_channels)
    elif name.startswith("vgg"):
        if in_channels != 3:
            model.features[0] = replace_first_conv(model.features[0], in_channels)
        if small:  # models/vgg.h: ceil-mode pools, 1x1 avgpool, 512-wide classifier
            for module in model.features:
                if isinstance(module, nn.MaxPool2d):
                    module.ceil_mode = True
            model.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            model.classifier = nn.Sequential(
                nn.Linear(512, 512), nn.ReLU(True), nn.Dropout(0.5),
                nn.Linear(512, 512), nn.ReLU(True), nn.Dropout(0.5), nn.Linear(512, classes))
    else:  # ImageNet ResNets
        if small:  # models/resnet.h: 3x3/1 stem without max-pool
            model.conv1 = replace_first_conv(model.conv1, in_channels, 3, 1, 1)
            model.maxpool = nn.Identity()
        elif in_channels != 3:
            model.conv1 = replace_first_conv(model.conv1, in_channels)
    return model


# ---- parameter counts ---------------------------------------------------------------------

def fnv1a64(text):
    value = 0xcbf29ce484222325
    for byte in text.encode("utf-8"):
        value = ((value ^ byte) * 0x100000001b3) & 0xffffffffffffffff
    return "%016x" % value


def signature(model):
    # "name:d0xd1x...;" for every parameter in order; the C++ test hashes the same text.
    return "".join("%s:%s;" % (name, "x".join(str(s) for s in p.shape))
                   for name, p in model.named_parameters())


def write_counts():
    configurations = []
    for name in IMAGENET_MODELS:
        configurations += [(name, 3, 1000, False), (name, 1, 10, True)]
    for depth in CIFAR_RESNETS:
        configurations += [("resnet%d" % depth, 3, 10, True)]
    configurations += [("small_cnn", 1, 10, True)]
    entries = []
    for name, in_channels, classes, small in configurations:
        model = build(name, in_channels, classes, small)
        entries.append({"model": name, "in_channels": in_channels, "classes": classes,
                        "small_images": small,
                        "parameters": sum(p.numel() for p in model.parameters()),
                        "gradient_tensors": len(list(model.parameters())),
                        "signature_fnv1a64": fnv1a64(signature(model))})
        print("%-10s in=%d classes=%-4d small=%d %12d parameters %4d tensors"
              % (name, in_channels, classes, small, entries[-1]["parameters"],
                 entries[-1]["gradient_tensors"]))
    path = os.path.join(HERE, "model_zoo.json")
    with open(path, "w") as out:
        json.dump({"generator": "tests/reference/torch_models.py --counts (torch %s, "
                   "torchvision %s)" % (torch.__version__, torchvision.__version__),
                   "models": entries}, out, indent=1)
        out.write("\n")
    print("wrote", path)


# ---- logits -------------------------------------------------------------------------------

def read_tensors(path):
    # One read into a bytearray and zero-copy views of it: a VGG's weights are ~500 MB.
    with open(path, "rb") as source:
        data = bytearray(source.read())
    if data[:4] != b"IMTS":
        raise SystemExit("torch_models.py: %s is not an IMTS tensor file" % path)
    (count,) = struct.unpack_from("<I", data, 4)
    offset = 8
    tensors = []
    for _ in range(count):
        kind = data[offset:offset + 1].decode()
        (name_length,) = struct.unpack_from("<I", data, offset + 1)
        offset += 5
        name = data[offset:offset + name_length].decode("utf-8")
        offset += name_length
        (ndim,) = struct.unpack_from("<I", data, offset)
        shape = struct.unpack_from("<%dq" % ndim, data, offset + 4)
        offset += 4 + 8 * ndim
        numel = 1
        for size in shape:
            numel *= size
        values = torch.frombuffer(data, dtype=torch.float32, count=numel, offset=offset)
        offset += 4 * numel
        tensors.append((kind, name, values.reshape(shape)))
    return tensors


def skip_initialisation():
    """Makes torch.nn.init's functions no-ops: every weight is overwritten from the file (the
    name check below makes sure), and initialising VGG's 120M weights costs seconds."""
    def keep(tensor, *args, **kwargs):
        return tensor
    for name in ("uniform_", "normal_", "constant_", "zeros_", "ones_", "kaiming_uniform_",
                 "kaiming_normal_", "xavier_uniform_", "xavier_normal_", "trunc_normal_"):
        setattr(nn.init, name, keep)


def write_tensors(path, tensors):
    with open(path, "wb") as out:
        out.write(b"IMTS" + struct.pack("<I", len(tensors)))
        for kind, name, tensor in tensors:
            encoded = name.encode("utf-8")
            out.write(kind.encode() + struct.pack("<I", len(encoded)) + encoded)
            out.write(struct.pack("<I", tensor.dim()) + struct.pack("<%dq" % tensor.dim(),
                                                                     *tensor.shape))
            out.write(tensor.detach().contiguous().to(torch.float32).numpy().tobytes())


def compute_logits(args):
    skip_initialisation()
    model = build(args.model, args.in_channels, args.classes, args.small)
    tensors = read_tensors(args.weights)
    inputs = [t for kind, _, t in tensors if kind == "i"]
    parameters = [(name, t) for kind, name, t in tensors if kind == "p"]
    buffers = {name: t for kind, name, t in tensors if kind == "b"}
    if len(inputs) != 1:
        raise SystemExit("torch_models.py: expected one input tensor, found %d" % len(inputs))

    expected_order = [name for name, _ in model.named_parameters()]
    got_order = [name for name, _ in parameters]
    if got_order != expected_order:
        raise SystemExit("torch_models.py: parameter names or order differ from PyTorch's:\n"
                         "  imerge:  %s\n  PyTorch: %s" % (got_order, expected_order))
    given = dict(parameters)
    given.update(buffers)
    state = model.state_dict()
    wanted = {name for name in state if not name.endswith("num_batches_tracked")}
    if set(given) != wanted:
        raise SystemExit("torch_models.py: names differ from PyTorch's state dict: missing %s, "
                         "unexpected %s" % (sorted(wanted - set(given)),
                                            sorted(set(given) - wanted)))
    for name, tensor in given.items():
        if tuple(state[name].shape) != tuple(tensor.shape):
            raise SystemExit("torch_models.py: %s has shape %s in imerge but %s in PyTorch"
                             % (name, list(tensor.shape), list(state[name].shape)))
        state[name] = tensor
    model.load_state_dict(state)
    model.eval()
    with torch.no_grad():
        logits = model(inputs[0])
    write_tensors(args.out, [("o", "logits", logits)])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--counts", action="store_true")
    parser.add_argument("--batch")
    parser.add_argument("--weights")
    parser.add_argument("--model")
    parser.add_argument("--out")
    parser.add_argument("--in-channels", type=int, default=3)
    parser.add_argument("--classes", type=int, default=1000)
    parser.add_argument("--small", action="store_true")
    args = parser.parse_args()
    torch.manual_seed(0)
    if args.counts:
        write_counts()
    elif args.batch:
        with open(args.batch) as source:
            cases = json.load(source)
        for case in cases:
            try:
                compute_logits(argparse.Namespace(
                    weights=case["weights"], model=case["model"], out=case["out"],
                    in_channels=case["in_channels"], classes=case["classes"],
                    small=case["small"]))
            except SystemExit as error:
                raise SystemExit("%s (case %s)" % (error, case))
    elif args.weights and args.model and args.out:
        compute_logits(args)
    else:
        parser.error("give --counts, or --weights, --model and --out")


if __name__ == "__main__":
    main()
