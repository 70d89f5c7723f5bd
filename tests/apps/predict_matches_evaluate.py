#!/usr/bin/env python3
"""predict_matches_evaluate.py IMERGE_TRAIN IMERGE_PREDICT WORKDIR FASHION_MNIST_DIR

A short Fashion-MNIST run writes a checkpoint. Its test split is exported as PNG files named
<index>-<label>.png; imerge-predict's top-1 class for each, given only the checkpoint, must give
the accuracy that `imerge-train --evaluate-only` reports for the same checkpoint on the IDX
files. Standard library only (the PNGs are written by hand: greyscale, 8 bits, one zlib stream).
"""
import gzip
import pathlib
import re
import shutil
import struct
import subprocess
import sys
import zlib


def png_bytes(width, height, pixels):
    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(b"\x00" + pixels[y * width:(y + 1) * width] for y in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)  # 8-bit greyscale
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows))
            + chunk(b"IEND", b""))


def export_test_split(data_dir, folder):
    images = gzip.open(data_dir / "t10k-images-idx3-ubyte.gz").read()
    labels = gzip.open(data_dir / "t10k-labels-idx1-ubyte.gz").read()
    count, rows, cols = struct.unpack(">III", images[4:16])
    folder.mkdir(parents=True)
    for index in range(count):
        start = 16 + index * rows * cols
        name = folder / f"{index:05d}-{labels[8 + index]}.png"
        name.write_bytes(png_bytes(cols, rows, images[start:start + rows * cols]))
    return count


def run(command):
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"predict_matches_evaluate: {' '.join(command)} failed:\n{result.stdout}\n"
                 f"{result.stderr}")
    return result.stdout


def main():
    train, predict, work, data_dir = sys.argv[1], sys.argv[2], pathlib.Path(sys.argv[3]), \
        pathlib.Path(sys.argv[4])
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    run([train, "--dataset", "fashion-mnist", "--data-dir", str(data_dir), "--model", "small_cnn",
         "--epochs", "1", "--max-steps", "40", "--batch-size", "64", "--threads", "1",
         "--workers", "1", "--checkpoint-dir", str(work / "ck")])
    checkpoint = str(work / "ck" / "last.ckpt")
    evaluated = run([train, "--evaluate-only", "--resume", checkpoint, "--threads", "1",
                     "--workers", "1"])
    match = re.search(r"test: loss \S+, accuracy ([0-9.]+)% on ([0-9]+) images", evaluated)
    if not match:
        sys.exit(f"predict_matches_evaluate: no test line in:\n{evaluated}")
    evaluate_accuracy, evaluate_images = float(match.group(1)), int(match.group(2))

    count = export_test_split(data_dir, work / "png")
    lines = run([predict, "--checkpoint", checkpoint, "--top", "1", "--threads", "1",
                 str(work / "png")]).splitlines()
    correct = 0
    for line in lines:
        found = re.fullmatch(r".*/[0-9]+-([0-9])\.png: 1\. .+ \(([0-9])\) [0-9.]+%", line)
        if not found:
            sys.exit(f"predict_matches_evaluate: unexpected line: {line}")
        correct += found.group(1) == found.group(2)
    predict_accuracy = 100.0 * correct / count
    print(f"evaluate-only: {evaluate_accuracy:.2f}% on {evaluate_images} images; "
          f"imerge-predict on the exported PNGs: {predict_accuracy:.2f}% "
          f"({correct} of {len(lines)})")
    if len(lines) != count or evaluate_images != count:
        sys.exit(f"predict_matches_evaluate: {len(lines)} predictions and {evaluate_images} "
                 f"evaluated images for {count} exported")
    if f"{predict_accuracy:.2f}" != f"{evaluate_accuracy:.2f}":
        sys.exit("predict_matches_evaluate: the accuracies differ")
    if evaluate_accuracy < 30:  # ten classes: a trained model is well above chance
        sys.exit("predict_matches_evaluate: the model did not learn; the comparison says little")


if __name__ == "__main__":
    main()
