#!/usr/bin/env python3
"""Writes the tiny IDX fixtures that tests/data/idx_reader_test.cpp reads.

Run from anywhere with plain python3 (standard library only):
    python3 tests/data/make_idx_fixtures.py

It writes tests/data/fixtures/tiny-{images-idx3,labels-idx1}-ubyte, plain and gzip-compressed.
The gzip files carry mtime 0 and no file name, so rerunning the script reproduces them byte for
byte. The pixel and label values are spelled out here and again in the test; they include 0 and
255 so the scaling to [0, 1] is checked at both ends, and the label 255 shows that the reader passes
labels outside 0..9 through unchanged (the MNIST datasets refuse them, naming the record).
"""
import gzip
import pathlib
import struct

FIXTURES = pathlib.Path(__file__).resolve().parent / "fixtures"

ROWS, COLS = 2, 3
# Three images of 2 x 3 pixels, row-major.
IMAGES = [
    [0, 1, 2, 3, 4, 5],
    [10, 20, 30, 128, 200, 254],
    [255, 0, 255, 17, 99, 255],
]
LABELS = [7, 0, 255]

UNSIGNED_BYTE = 0x08


def idx_bytes(sizes, payload):
    # Magic 00 00 <type> <rank>, then each size as a big-endian uint32, then the data.
    header = bytes([0, 0, UNSIGNED_BYTE, len(sizes)]) + b"".join(struct.pack(">I", s) for s in sizes)
    return header + bytes(payload)


def write(name, data):
    (FIXTURES / name).write_bytes(data)
    (FIXTURES / (name + ".gz")).write_bytes(gzip.compress(data, compresslevel=9, mtime=0))


def main():
    FIXTURES.mkdir(parents=True, exist_ok=True)
    pixels = [value for image in IMAGES for value in image]
    write("tiny-images-idx3-ubyte", idx_bytes([len(IMAGES), ROWS, COLS], pixels))
    write("tiny-labels-idx1-ubyte", idx_bytes([len(LABELS)], LABELS))
    print(f"wrote {len(IMAGES)} images and {len(LABELS)} labels to {FIXTURES}")


if __name__ == "__main__":
    main()
