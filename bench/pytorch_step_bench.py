"""PyTorch's time for one training step of the networks of bench/step_bench.cpp.

Run with /usr/bin/python3 (Debian's python3-torch). Prints one JSON line, like
imerge-step-bench, so bench/compare_with_pytorch.sh can put the two side by side.
"""
import argparse
import json
import time

import torch
import torch.nn as nn


def small_cnn():
    return nn.Sequential(
        nn.Conv2d(1, 32, 3, 1, 1, bias=False), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, 1, 1, bias=False), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Dropout(0.25), nn.Linear(128, 10))


def conv_stack():
    channels = [3, 64, 64, 128, 256]
    layers = []
    for cin, cout in zip(channels, channels[1:]):
        layers += [nn.Conv2d(cin, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU()]
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(256, 10)]
    return nn.Sequential(*layers)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--network", choices=["small-cnn", "conv-stack"], default="small-cnn")
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=10)
    args = parser.parse_args()

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    if args.network == "small-cnn":
        model, shape = small_cnn(), (args.batch, 1, 28, 28)
    else:
        model, shape = conv_stack(), (args.batch, 3, 56, 56)
    images = torch.randn(shape)
    labels = torch.arange(args.batch) % 10
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()

    def step():
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model(images), labels)
        loss.backward()
        optimizer.step()

    for _ in range(args.warmup):
        step()
    times = []
    for _ in range(args.iterations):
        start = time.perf_counter()
        step()
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    median = times[len(times) // 2]
    print(json.dumps({"framework": "pytorch " + torch.__version__, "network": args.network,
                      "batch": args.batch, "threads": args.threads, "median_ms": round(median, 3),
                      "min_ms": round(times[0], 3),
                      "images_per_s": round(args.batch * 1000 / median, 1)}))


if __name__ == "__main__":
    main()
