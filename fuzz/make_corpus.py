#!/usr/bin/env python3
"""Writes the fuzzers' seed corpus, fuzz/corpus/<reader>/: a few small valid files per reader
(from which libFuzzer mutates) and a few near-misses. Run with /usr/bin/python3 (Pillow for the
images): python3 fuzz/make_corpus.py. The files are committed; rerunning rewrites them. The
corpus also keeps what the fuzzers found, so that every run replays it (not written here):
  image/dht-overflow.jpg     a Huffman table of 530 codes (data/jpeg_huffman_guard.h)
  image/undefined-table.jpg  a progressive scan decoding with a Huffman table never defined
  image/idat-length.png      an IDAT chunk declaring more bytes than the file holds"""
import gzip
import io
import pathlib
import struct
import zlib

from PIL import Image

root = pathlib.Path(__file__).resolve().parent / "corpus"


def write(reader, name, data):
    folder = root / reader
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(data)


def idx(type_code, sizes, data):
    return bytes([0, 0, type_code, len(sizes)]) + b"".join(struct.pack(">I", s) for s in sizes) + data


# IDX: images [2, 3, 3] and labels [2], plain and gzip; a header claiming more than is there.
images = idx(0x08, [2, 3, 3], bytes(range(18)))
labels = idx(0x08, [2], bytes([3, 9]))
write("idx", "images", images)
write("idx", "labels", labels)
write("idx", "images.gz", gzip.compress(images, mtime=0))
write("idx", "labels.gz", gzip.compress(labels, mtime=0))
write("idx", "images-truncated", idx(0x08, [60000, 28, 28], bytes(40)))

# CIFAR-10: two records (label byte, 3072 pixel bytes) and a truncated one.
record = lambda label: bytes([label]) + bytes(i % 251 for i in range(3072))
write("cifar10", "two-records.bin", record(1) + record(9))
write("cifar10", "truncated.bin", record(2)[:1000])


# Images: PNG in each colour type the decoder converts from, baseline and progressive JPEG.
def encoded(image, **options):
    out = io.BytesIO()
    image.save(out, **options)
    return out.getvalue()


rgb = Image.new("RGB", (5, 4))
rgb.putdata([(17 * i % 256, 40 * i % 256, 255 - 9 * i) for i in range(20)])
write("image", "rgb.png", encoded(rgb, format="PNG"))
write("image", "grey.png", encoded(rgb.convert("L"), format="PNG"))
write("image", "rgba.png", encoded(rgb.convert("RGBA"), format="PNG"))
write("image", "palette.png", encoded(rgb.convert("P"), format="PNG"))
write("image", "optimized.png", encoded(rgb, format="PNG", optimize=True))
write("image", "baseline.jpg", encoded(rgb, format="JPEG", quality=90))
write("image", "progressive.jpg", encoded(rgb, format="JPEG", quality=90, progressive=True))
write("image", "grey.jpg", encoded(rgb.convert("L"), format="JPEG"))


# Checkpoint payloads (docs/checkpoint_format.md; checkpoint_fuzzer adds the header) and one
# whole file with its header.
def string(text):
    data = text.encode()
    return struct.pack("<I", len(data)) + data


def mapping(entries):
    return struct.pack("<I", len(entries)) + b"".join(string(k) + string(v) for k, v in sorted(entries.items()))


def tensor(name, sizes, values):
    data = struct.pack(f"<{len(values)}f", *values)
    return (string(name) + bytes([0]) + struct.pack("<I", len(sizes)) +
            b"".join(struct.pack("<q", s) for s in sizes) + struct.pack("<Q", len(data)) + data)


common = (string("small_cnn") + struct.pack("<qq", 1, 938) + mapping({"data": "1 2 3", "dropout": "4"}) +
          mapping({"seed": "2024", "dataset": "fashion-mnist"}) +
          struct.pack("<I", 1) + tensor("fc.weight", [2, 3], [0.5] * 6) +
          struct.pack("<I", 1) + tensor("bn.running_mean", [3], [0.0, 1.0, 2.0]))
without_optimizer = common + bytes([0])
with_sgd = (common + bytes([1]) + struct.pack("<ffff", 0.1, 0.9, 0.0, 5e-4) + bytes([0]) +
            struct.pack("<I", 1) + tensor("fc.weight", [2, 3], [0.25] * 6))
write("checkpoint", "payload-no-optimizer", without_optimizer)
write("checkpoint", "payload-sgd", with_sgd)
header = b"IMERGECK" + struct.pack("<IIQ", 1, zlib.crc32(with_sgd), 24 + len(with_sgd))
write("checkpoint", "whole-file.ckpt", header + with_sgd)
