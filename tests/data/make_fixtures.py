#!/usr/bin/python3
"""Writes the CIFAR-10 and image-folder fixtures that tests/data/*_test.cpp read.

Run from anywhere with an interpreter that has Pillow: Debian's, with `python3-pil` installed
(the python3 first on the PATH here is a separate interpreter without it; docs/design.md, pitfalls):
    /usr/bin/python3 tests/data/make_fixtures.py

It writes, under tests/data/fixtures/:
  cifar10/test_batch.bin        3 records: 1 label byte + 3072 pixel bytes (R, G, B planes, 32x32)
  cifar10/data_batch_{1..5}.bin 1 record each
  image_folder/ant/a0.png       8x8 RGB, exact values (see png_pixel)
  image_folder/ant/a1.jpg       8x8 RGB JPEG of the same pattern (quality 95, no chroma subsampling)
  image_folder/bee/b0.png       8x8 greyscale (decoded to 3 equal channels)
  image_folder/bee/b1.jpeg      8x8 RGB JPEG of the reversed pattern
  image_folder/bee/notes.txt    not an image: the reader must ignore it
  jpeg/progressive.jpg          32x32 RGB progressive JPEG (Huffman tables between its scans)

The pixel formulas are spelled out here and again in the tests. Outputs are deterministic.
"""
import pathlib

from PIL import Image

FIXTURES = pathlib.Path(__file__).resolve().parent / "fixtures"
SIZE = 8


def cifar_pixel(record, byte):
    return (record * 7 + byte * 3) % 256


def cifar_record(record, label):
    return bytes([label]) + bytes(cifar_pixel(record, j) for j in range(3072))


def png_pixel(x, y):
    return (x * 30, y * 30, (x + y) * 10)


def write_cifar():
    folder = FIXTURES / "cifar10"
    folder.mkdir(parents=True, exist_ok=True)
    test_labels = [3, 0, 9]
    (folder / "test_batch.bin").write_bytes(
        b"".join(cifar_record(i, label) for i, label in enumerate(test_labels)))
    for batch in range(1, 6):
        # Record index 10 + batch, label batch: distinct values per file.
        (folder / f"data_batch_{batch}.bin").write_bytes(cifar_record(10 + batch, batch))


def rgb_image(reverse):
    image = Image.new("RGB", (SIZE, SIZE))
    for y in range(SIZE):
        for x in range(SIZE):
            px, py = (SIZE - 1 - x, SIZE - 1 - y) if reverse else (x, y)
            image.putpixel((x, y), png_pixel(px, py))
    return image


def write_image_folder():
    root = FIXTURES / "image_folder"
    (root / "ant").mkdir(parents=True, exist_ok=True)
    (root / "bee").mkdir(parents=True, exist_ok=True)
    rgb_image(False).save(root / "ant" / "a0.png")
    rgb_image(False).save(root / "ant" / "a1.jpg", quality=95, subsampling=0)
    grey = Image.new("L", (SIZE, SIZE))
    for y in range(SIZE):
        for x in range(SIZE):
            grey.putpixel((x, y), x * 8 + y * 4)
    grey.save(root / "bee" / "b0.png")
    rgb_image(True).save(root / "bee" / "b1.jpeg", quality=95, subsampling=0)
    (root / "bee" / "notes.txt").write_text("not an image; the image-folder reader ignores it\n")


def write_progressive_jpeg():
    folder = FIXTURES / "jpeg"
    folder.mkdir(parents=True, exist_ok=True)
    image = Image.new("RGB", (32, 32))
    for y in range(32):
        for x in range(32):
            image.putpixel((x, y), ((x * 8) % 256, (y * 8) % 256, ((x + y) * 4) % 256))
    image.save(folder / "progressive.jpg", quality=90, progressive=True, optimize=True)


def main():
    write_cifar()
    write_image_folder()
    write_progressive_jpeg()
    print(f"wrote CIFAR-10 and image-folder fixtures under {FIXTURES}")


if __name__ == "__main__":
    main()
