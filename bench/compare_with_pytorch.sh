#!/usr/bin/env bash
# Times one training step of each benchmark network in imerge and in PyTorch, in one run with
# the same batch and thread count, and prints the speed ratio (PyTorch time / imerge time:
# above 1 means imerge is faster). Installs PyTorch and builds imerge first if needed.
#   bench/compare_with_pytorch.sh [threads] [rounds]
#   bench/compare_with_pytorch.sh --models [threads] [rounds]
# --models: the five model workloads of docs/performance.md against both Debian's PyTorch 1.13
# (/usr/bin/python3) and PyTorch 2.x from PyPI, which it installs into build/torch2-venv (about
# 5 GiB, a few minutes, once; never needed by the tests), with each side's peak resident memory
# and the fraction of OpenBLAS sgemm's peak each imerge step reaches.
# Each round runs both frameworks back to back; the ratio is of the medians over rounds, so a
# noisy neighbour on a shared machine slows both alike. The JSON of every run goes to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
models=0
if [[ ${1:-} == --models ]]; then
  models=1
  shift
fi
threads=${1:-2}
rounds=${2:-3}
scripts/install-deps.sh >/dev/null
# Only the benchmark binary: the whole tree (every test suite) is minutes more on 2 cores.
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/release --target imerge-step-bench imerge-sgemm-peak >/dev/null

if ((models)); then
  venv=build/torch2-venv
  if [[ ! -x $venv/bin/python ]] || ! "$venv/bin/python" -c 'import torch, torchvision' 2>/dev/null; then
    echo "compare_with_pytorch.sh: installing PyTorch 2.x from PyPI into $venv (once)" >&2
    if ! /usr/bin/python3 -m venv --help >/dev/null 2>&1; then apt-get install -y python3-venv >&2; fi
    /usr/bin/python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet torch torchvision >&2
  fi
  peers=(/usr/bin/python3 "$venv/bin/python")
  runs=$(mktemp)
  trap 'rm -f "$runs"' EXIT
  OMP_NUM_THREADS=$threads build/release/bench/imerge-sgemm-peak --threads "$threads" >>"$runs"
  # network, batch, iterations, then flags of both benchmarks
  workloads=("resnet18 32 10 --small-images" "resnet18 8 6" "alexnet 32 6" "resnet50 8 4"
    "vgg16 4 4")
  for ((round = 1; round <= rounds; ++round)); do
    for workload in "${workloads[@]}"; do
      read -r network batch iterations flags <<<"$workload"
      echo "round $round/$rounds: $network batch $batch" >&2
      OMP_NUM_THREADS=$threads build/release/bench/imerge-step-bench --network "$network" \
        --batch "$batch" --threads "$threads" --warmup 2 --iterations "$iterations" $flags >>"$runs"
      for python in "${peers[@]}"; do
        OMP_NUM_THREADS=$threads "$python" bench/pytorch_step_bench.py --network "$network" \
          --batch "$batch" --threads "$threads" --warmup 2 --iterations "$iterations" $flags >>"$runs"
      done
    done
  done
  cat "$runs" >&2
  /usr/bin/python3 bench/summarize_models.py <"$runs"
  exit 0
fi

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
