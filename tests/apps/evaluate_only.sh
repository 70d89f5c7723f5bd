#!/usr/bin/env bash
# evaluate_only.sh IMERGE_TRAIN WORKDIR: a short run writes a checkpoint and prints its test
# metrics; `--evaluate-only --resume` on that checkpoint, given no other flag of the run (model,
# dataset, image size and seed come from the checkpoint), must print the same line.
set -eu
train=$1 work=$2
rm -rf "$work" && mkdir -p "$work"
"$train" --dataset synthetic --image-size 16 --model resnet20 --batch-size 8 --max-steps 3 \
  --epochs 1 --threads 1 --workers 1 --seed 7 --lr 0.05 --checkpoint-dir "$work" >"$work/train.log"
"$train" --evaluate-only --resume "$work/last.ckpt" --threads 1 --workers 1 >"$work/evaluate.log"
trained=$(grep "  test: " "$work/train.log")
evaluated=$(grep "  test: " "$work/evaluate.log")
echo "after training:  $trained"
echo "evaluate-only:   $evaluated"
if ! grep -q "^model: resnet20" "$work/evaluate.log" || ! grep -q "synthetic" "$work/evaluate.log"; then
  echo "evaluate_only: the model and dataset were not taken from the checkpoint" >&2
  cat "$work/evaluate.log" >&2
  exit 1
fi
if grep -q "epoch 1/" "$work/evaluate.log"; then
  echo "evaluate_only: --evaluate-only trained" >&2
  exit 1
fi
if [[ $trained != "$evaluated" ]]; then
  echo "evaluate_only: the checkpoint's test metrics differ from the run's own" >&2
  exit 1
fi
