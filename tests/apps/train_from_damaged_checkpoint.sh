#!/usr/bin/env bash
# train_from_damaged_checkpoint.sh IMERGE_TRAIN WORKDIR: trains one short epoch with a
# checkpoint, flips one byte in its payload, and resumes from it; imerge-train must refuse,
# and the checkpoint directory must hold the damaged file untouched (nothing overwritten).
set -eu
train=$1 work=$2
rm -rf "$work" && mkdir -p "$work"
common=(--dataset synthetic --image-size 16 --model resnet20 --batch-size 8 --max-steps 2
        --threads 1 --workers 1)
"$train" "${common[@]}" --epochs 1 --checkpoint-dir "$work" >/dev/null
file="$work/last.ckpt"
offset=$(($(stat -c %s "$file") / 2))
byte=$(od -An -tu1 -j "$offset" -N1 "$file" | tr -d ' ')
printf "\\$(printf %03o $(((byte + 1) % 256)))" | dd of="$file" bs=1 seek="$offset" conv=notrunc status=none
cp "$work/last.ckpt" "$work/damaged.copy"
status=0
"$train" "${common[@]}" --epochs 2 --checkpoint-dir "$work" --resume "$work/last.ckpt" || status=$?
cmp -s "$work/last.ckpt" "$work/damaged.copy" || { echo "the checkpoint was overwritten" >&2; exit 0; }
exit $status
