#!/usr/bin/env bash
# resume_matches_uninterrupted.sh IMERGE_TRAIN WORKDIR [FLAG...]: a 2-epoch run must end with
# the same checkpoint, byte for byte (parameters, buffers, momentum, counters, random state), as
# a run stopped after epoch 1 and resumed for epoch 2. FLAGs go to every run; with LAUNCHER set
# (e.g. "mpirun -np 2") every run goes through it, so a data-parallel run, whose checkpoints
# rank 0 writes, is resumed by every rank.
set -eu
train=$1 work=$2
shift 2
read -r -a launcher <<<"${LAUNCHER:-}"
rm -rf "$work" && mkdir -p "$work"
common=(--dataset synthetic --image-size 16 --model resnet20 --batch-size 8 --max-steps 3
        --epochs 2 --threads 1 --workers 1 --seed 7 --lr 0.05 "$@")
"${launcher[@]}" "$train" "${common[@]}" --checkpoint-dir "$work/straight"
"${launcher[@]}" "$train" "${common[@]}" --checkpoint-dir "$work/split" --stop-after-epochs 1
"${launcher[@]}" "$train" "${common[@]}" --checkpoint-dir "$work/split" \
  --resume "$work/split/last.ckpt"
if cmp "$work/straight/last.ckpt" "$work/split/last.ckpt"; then
  echo "resume: identical checkpoints after 2 epochs"
else
  echo "resume: the resumed run differs from the uninterrupted one" >&2
  exit 1
fi
