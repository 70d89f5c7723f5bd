#!/usr/bin/env bash
# train_from_other_model.sh IMERGE_TRAIN WORKDIR: resuming a resnet32 run from a resnet20
# checkpoint must be refused with a message naming both models.
set -eu
train=$1 work=$2
rm -rf "$work" && mkdir -p "$work"
common=(--dataset synthetic --image-size 16 --batch-size 8 --max-steps 1 --threads 1 --workers 1)
"$train" "${common[@]}" --model resnet20 --epochs 1 --checkpoint-dir "$work" >/dev/null
exec "$train" "${common[@]}" --model resnet32 --epochs 2 --resume "$work/last.ckpt"
