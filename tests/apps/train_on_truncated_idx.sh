#!/usr/bin/env bash
# train_on_truncated_idx.sh IMERGE_TRAIN FIXTURES WORKDIR: runs imerge-train on a data folder
# whose training images file is cut short, to check the error names that file.
set -eu
train=$1 fixtures=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
head -c 30 "$fixtures/tiny-images-idx3-ubyte" >"$work/train-images-idx3-ubyte"
cp "$fixtures/tiny-labels-idx1-ubyte" "$work/train-labels-idx1-ubyte"
exec "$train" --data-dir "$work"
