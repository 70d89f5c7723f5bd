#!/usr/bin/env bash
# Times one training step of each benchmark network in imerge and in PyTorch, in one run with
# the same batch and thread count, and prints the speed ratio (PyTorch time / imerge time:
# above 1 means imerge is faster). Installs PyTorch and builds imerge first if needed.
#   bench/compare_with_pytorch.sh [threads]
set -euo pipefail
cd "$(dirname "$0")/.."
threads=${1:-2}
scripts/install-deps.sh --bench >/dev/null
scripts/build.sh release >/dev/null

run_pair() {  # network batch
  local ours theirs
  # Interleave the two frameworks so drift on a shared machine hits both alike.
  ours=$(OMP_NUM_THREADS=$threads build/release/bench/imerge-step-bench --network "$1" --batch "$2" \
    --threads "$threads" --warmup 5 --iterations 20)
  theirs=$(OMP_NUM_THREADS=$threads /usr/bin/python3 bench/pytorch_step_bench.py --network "$1" \
    --batch "$2" --threads "$threads" --warmup 5 --iterations 20)
  echo "$ours" >&2
  echo "$theirs" >&2
  /usr/bin/python3 - "$ours" "$theirs" <<'PY'
import json, sys
ours, theirs = json.loads(sys.argv[1]), json.loads(sys.argv[2])
ratio = theirs["median_ms"] / ours["median_ms"]
print(f"| {ours['network']} | {ours['batch']} | {ours['threads']} | {ours['median_ms']:.1f} | "
      f"{theirs['median_ms']:.1f} | {ratio:.2f}x |")
PY
}

echo "| network | batch | threads | imerge ms/step | PyTorch ms/step | speed vs PyTorch |"
echo "|---|---|---|---|---|---|"
run_pair small-cnn 64
run_pair small-cnn 16
run_pair conv-stack 16
