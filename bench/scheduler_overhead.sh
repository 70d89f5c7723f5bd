#!/usr/bin/env bash
# The scheduler's own cost in a real data-parallel step: ResNet-18 (small-image stem) on
# synthetic 32x32 images, batch 32 per rank, 2 ranks of one thread each, for every strategy.
# Reports the mean time the Reducer and DataParallel spend in hooks, launches and finish()
# (waiting excluded) as a share of the iteration, from imerge-train's metrics log.
#   bench/scheduler_overhead.sh [STEPS]        (default 30; the first 5 are the warm-up)
set -euo pipefail
cd "$(dirname "$0")/.."
steps=${1:-30}
train=build/release/imerge-train
[[ -x $train ]] || scripts/build.sh release
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf "%-9s %12s %12s %14s %10s\n" strategy "iteration ms" "compute ms" "bookkeeping ms" "share"
for strategy in default wfbp fusion priority mgwfbp imerge; do
  mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2 "$train" --dist "$strategy" \
    --model resnet18 --dataset synthetic --image-size 32 --batch-size 32 --epochs 1 \
    --max-steps "$steps" --threads 1 --workers 1 --eval-every 1000 --log-json "$work/$strategy.json" \
    >/dev/null
  /usr/bin/python3 - "$work/$strategy.json" "$strategy" <<'PY'
import json, sys
epoch = json.load(open(sys.argv[1]))["epochs"][0]["distributed"]["per_iteration"]
warm = 5  # leave out the warm-up and the step that rebuilds the plan
iteration = sum(epoch["iteration_s"][warm + 1:]) / len(epoch["iteration_s"][warm + 1:])
compute = sum(epoch["compute_s"][warm + 1:]) / len(epoch["compute_s"][warm + 1:])
book = sum(epoch["bookkeeping_s"][warm + 1:]) / len(epoch["bookkeeping_s"][warm + 1:])
print(f"{sys.argv[2]:<9} {1e3*iteration:12.1f} {1e3*compute:12.1f} {1e3*book:14.3f} {100*book/iteration:9.3f}%")
PY
done
