#!/usr/bin/env bash
# Times one training step of each benchmark network in imerge and in PyTorch, in one run with
# the same batch and thread count, and prints the speed ratio (PyTorch time / imerge time:
# above 1 means imerge is faster). Installs PyTorch and builds imerge first if needed.
#   bench/compare_with_pytorch.sh [threads] [rounds]
# Each round runs both frameworks back to back; the ratio is of the medians over rounds, so a
# noisy neighbour on a shared machine slows both alike. The JSON of every run goes to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
threads=${1:-2}
rounds=${2:-3}
scripts/install-deps.sh >/dev/null
# Only the benchmark binary: the whole tree (every test suite) is minutes more on 2 cores.
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/release --target imerge-step-bench >/dev/null

compare() {  # network batch iterations
  local runs=()
  for ((round = 1; round <= rounds; ++round)); do
    runs+=("$(OMP_NUM_THREADS=$threads build/release/bench/imerge-step-bench --network "$1" \
      --batch "$2" --threads "$threads" --warmup 3 --iterations "$3")")
    runs+=("$(OMP_NUM_THREADS=$threads /usr/bin/python3 bench/pytorch_step_bench.py \
      --network "$1" --batch "$2" --threads "$threads" --warmup 3 --iterations "$3")")
  done
  printf '%s\n' "${runs[@]}" >&2
  printf '%s\n' "${runs[@]}" | /usr/bin/python3 bench/summarize_runs.py
}

echo "| network | batch | threads | imerge ms/step | PyTorch ms/step | speed vs PyTorch | imerge peak tensor memory |"
echo "|---|---|---|---|---|---|---|"
compare small-cnn 64 20
compare small-cnn 16 20
compare conv-stack 16 8
