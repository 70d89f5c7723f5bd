#!/usr/bin/env bash
# dist_different_datasets.sh MPIRUN IMERGE_TRAIN WORKDIR: two ranks, each with its own copy of
# an MNIST-format dataset, one of them incomplete (64 training images in A, 40 in B), launched
# MPMD as on a cluster whose nodes hold their own data. Both ranks must refuse before the first
# step, each naming both ranks' counts and folders (and steps per epoch: 64 / 2 ranks / 8 = 4,
# 40 / 2 / 8 rounded up = 3), and the job must end with a non-zero status
# that is not a signal, within the --dist-timeout of 20 s.
set -u
mpirun=$1 train=$2 work=$3
rm -rf "$work" && mkdir -p "$work/A" "$work/B"
# train-images/labels and t10k-images/labels of N images of 28x28 (IDX, big-endian header).
make_idx() {  # make_idx FOLDER TRAIN_IMAGES TEST_IMAGES
  /usr/bin/python3 - "$@" <<'PY'
import struct, sys
folder, sizes = sys.argv[1], {"train": int(sys.argv[2]), "t10k": int(sys.argv[3])}
for split, n in sizes.items():
    with open(f"{folder}/{split}-images-idx3-ubyte", "wb") as f:
        f.write(struct.pack(">IIII", 0x803, n, 28, 28) + bytes((i * 7) % 256 for i in range(n * 784)))
    with open(f"{folder}/{split}-labels-idx1-ubyte", "wb") as f:
        f.write(struct.pack(">II", 0x801, n) + bytes(i % 10 for i in range(n)))
PY
}
make_idx "$work/A" 64 16
make_idx "$work/B" 40 16
flags=(--model small_cnn --dataset mnist --epochs 1 --batch-size 8 --threads 1 --workers 1
  --dist imerge --dist-timeout 20)
start=$SECONDS
"$mpirun" --allow-run-as-root --oversubscribe --bind-to none \
  -np 1 "$train" "${flags[@]}" --data-dir "$work/A" : \
  -np 1 "$train" "${flags[@]}" --data-dir "$work/B" >"$work/log" 2>&1
status=$?
elapsed=$((SECONDS - start))
cat "$work/log"
echo "dist_different_datasets: exit status $status after $elapsed s"
fail() { echo "dist_different_datasets: $*" >&2; exit 1; }
((status != 0)) || fail "the job succeeded; expected a refusal"
((status < 128)) || fail "the job ended by signal $((status - 128)); expected a clean refusal"
((elapsed < 20)) || fail "the refusal took $elapsed s, not within --dist-timeout (20 s)"
for rank in 0 1; do
  grep -q "imerge-train: error on rank $rank of 2: the ranks read different datasets: rank 1 reads 40 training images from $work/B, rank 0 reads 64 from $work/A" "$work/log" ||
    fail "rank $rank did not refuse naming both ranks' training images and folders"
done
grep -q "rank 1 runs 3 training steps per epoch, rank 0 runs 4" "$work/log" ||
  fail "the refusal does not name the steps per epoch"
! grep -Eq "backtrace|Signal:|free\(\)|NBC" "$work/log" || fail "a crash report in the output"
echo "dist_different_datasets: both ranks refused, naming both datasets"
