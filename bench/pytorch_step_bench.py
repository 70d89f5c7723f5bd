"""PyTorch's time for one training step of the networks of bench/step_bench.cpp, on the CPU or
a GPU. Prints one JSON line with the same fields as imerge-step-bench, so
bench/compare_with_pytorch.sh (CPU) and scripts/gpu-check.sh (GPU) can put the two side by side.

Run with an interpreter that imports torch and torchvision: Debian's /usr/bin/python3 on the
development machines, the image's python3 on a GPU machine.

Networks: small-cnn and conv-stack as bench/step_bench.cpp defines them, and every model of
models/registry.h built by tests/reference/torch_models.py (torchvision's definitions, edited
for the small-image stem exactly as the model-zoo tests check), on [B, 3, S, S] with 1000
classes (10 with --small-images).

On CUDA: one batch is copied to the GPU once; torch.cuda.synchronize() runs before each step's
clock starts and before it stops; peak_bytes is torch.cuda.max_memory_allocated() since the
start (warm-up included), the counterpart of imerge's allocator peak. Settings are PyTorch's
defaults for float32 training, which are also imerge's: cuDNN convolutions may use TF32
(torch.backends.cudnn.allow_tf32 = True), matrix products stay in full float32
(torch.backends.cuda.matmul.allow_tf32 = False); the output states them. cuDNN's benchmark mode
is on (the usual setting for fixed-size inputs, and what imerge does: an algorithm search per
shape); --no-cudnn-benchmark turns it off.
"""
import argparse
import json
import os
import resource
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "reference"))

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

from torch_models import build, small_cnn  # noqa: E402  (exits with a hint without torchvision)


def conv_stack():
    channels = [3, 64, 64, 128, 256]
    layers = []
    for cin, cout in zip(channels, channels[1:]):
        layers += [nn.Conv2d(cin, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU()]
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(256, 10)]
    return nn.Sequential(*layers)


def workload(args):
    """The model, the input shape [B, C, H, W] and the number of classes."""
    if args.network == "small-cnn":
        return small_cnn(1, 10), (args.batch, 1, 28, 28), 10
    if args.network == "conv-stack":
        return conv_stack(), (args.batch, 3, 56, 56), 10
    size = args.image_size or (32 if args.small_images else 224)
    classes = 10 if args.small_images else 1000
    return build(args.network, 3, classes, args.small_images), (args.batch, 3, size, size), classes


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--network", default="small-cnn",
                        help="small-cnn, conv-stack or a models/registry.h name (resnet50, ...)")
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--image-size", type=int, default=0,
                        help="registry models: input size (default 224, 32 with --small-images)")
    parser.add_argument("--small-images", action="store_true",
                        help="registry models: the small-image stem and 10 classes")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--deterministic", action="store_true",
                        help="cuDNN: deterministic algorithms only")
    parser.add_argument("--no-tf32", action="store_true", help="cuDNN convolutions without TF32")
    parser.add_argument("--no-cudnn-benchmark", action="store_true",
                        help="cuDNN: heuristics instead of an algorithm search per shape")
    args = parser.parse_args()
    fixed_shape = args.network in ("small-cnn", "conv-stack")
    if fixed_shape and (args.image_size or args.small_images):
        parser.error("--image-size and --small-images are for registry models; --network %s "
                     "has a fixed input shape" % args.network)
    if args.batch < 1 or args.iterations < 1 or args.warmup < 0:
        parser.error("--batch and --iterations must be positive, --warmup not negative")

    cuda = args.device == "cuda"
    if cuda and not torch.cuda.is_available():
        sys.exit("pytorch_step_bench.py: --device cuda: torch %s sees no GPU" % torch.__version__)
    torch.set_num_threads(args.threads)
    # PyTorch's defaults, set explicitly so that the output states what was measured.
    torch.backends.cudnn.allow_tf32 = not args.no_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.benchmark = not args.no_cudnn_benchmark
    torch.backends.cudnn.deterministic = args.deterministic
    torch.manual_seed(0)

    device = torch.device(args.device)
    model, shape, classes = workload(args)
    model = model.to(device)
    images = torch.randn(shape).to(device)
    labels = (torch.arange(args.batch) % classes).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()

    def synchronize():
        if cuda:
            torch.cuda.synchronize()

    def step():
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model(images), labels)
        loss.backward()
        optimizer.step()

    for _ in range(args.warmup):
        step()
    synchronize()
    times = []
    for _ in range(args.iterations):
        start = time.perf_counter()
        step()
        synchronize()
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    median = times[len(times) // 2]
    result = {"framework": "pytorch " + torch.__version__, "network": args.network,
              "device": args.device, "batch": args.batch, "image_size": shape[3],
              "small_images": args.small_images, "threads": args.threads,
              "tf32": cuda and torch.backends.cudnn.allow_tf32,
              "matmul_tf32": cuda and torch.backends.cuda.matmul.allow_tf32,
              "cudnn_benchmark": cuda and torch.backends.cudnn.benchmark,
              "deterministic": args.deterministic, "warmup": args.warmup,
              "iterations": args.iterations, "median_ms": round(median, 3),
              "min_ms": round(times[0], 3),
              "images_per_s": round(args.batch * 1000 / median, 1),
              # Linux reports kilobytes; imerge-step-bench reads the same counter.
              "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}
    if cuda:
        result["peak_bytes"] = torch.cuda.max_memory_allocated()
        result["gpu"] = torch.cuda.get_device_name()
        result["cudnn_version"] = torch.backends.cudnn.version()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
