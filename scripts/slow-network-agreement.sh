#!/usr/bin/env bash
# The simulator against real runs (issue 5's check): for each rank count, measures the
# all-reduce cost with imerge-commbench on idle cores and beside busy compute threads (the
# contention, imerge-scale --contention), then lets imerge-scale train every strategy for real
# (ResNet-18 with the small-image stem on synthetic 32x32 images) and simulate the same runs
# from each run's own compute profile and the measured model, and prints simulated against
# measured. The network is scripts/slow-network.sh's rate-limited links, or with RATE `shm`
# plain mpirun on this machine (shared memory).
#   scripts/slow-network-agreement.sh [RATE|shm] [RANKS...]     default: 1gbit 2 3 4
# Environment:
#   AGREEMENT_OUT=DIR        where the tables go (default docs/data): DIR/slow-network-<RATE>-
#                            commbench.csv, ...-reduce-scatter.csv, ...-all-gather.csv, ...-contention.csv and DIR/slow-network-<RATE>-scale.
#                            {csv,json,runs/} (shared-memory-* for shm)
#   AGREEMENT_CONTENTION=0   simulate without contention (the model before it was measured)
#   AGREEMENT_BOUND=PERCENT  fail (exit 1) when a simulated time per iteration is further than
#                            this from the measured one (default: report only)
#   BUILD=DIR                the build with imerge-scale and imerge-commbench (build/release)
set -euo pipefail
cd "$(dirname "$0")/.."
rate=${1:-1gbit}
shift || true
ranks=("$@")
((${#ranks[@]})) || ranks=(2 3 4)
build=${BUILD:-build/release}
out=${AGREEMENT_OUT:-docs/data}
bound=${AGREEMENT_BOUND:-}
[[ -x $build/imerge-scale && -x $build/imerge-commbench ]] || scripts/build.sh release
mkdir -p "$out"
export OMP_NUM_THREADS=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
stem=$out/slow-network-$rate
[[ $rate == shm ]] && stem=$out/shared-memory
samples=$stem-commbench.csv
contention=$stem-contention.csv
with_contention=${AGREEMENT_CONTENTION:-1}

# How N ranks are launched: "{ranks}" stands for N (imerge-scale's --launcher syntax).
if [[ $rate == shm ]]; then
  launcher="mpirun --allow-run-as-root --oversubscribe --bind-to none -np {ranks}"
else
  launcher="scripts/slow-network.sh --ranks {ranks} --rate $rate --"
fi

# sweep FLAGS OUT RANKS...: one imerge-commbench sweep per rank count, all in one CSV.
sweep() {
  local flags=$1 csv=$2 first=1 n
  shift 2
  for n in "$@"; do
    echo "slow-network-agreement: sweep on $n ranks ($rate) $flags" >&2
    # shellcheck disable=SC2086  # flags are words
    ${launcher//\{ranks\}/$n} "$build/imerge-commbench" --backend host --max-bytes 67108864 \
      $flags --out "$work/comm$n" >"$work/comm$n.out" 2>&1 || { cat "$work/comm$n.out"; exit 1; }
    if ((first)); then cat "$work/comm$n.csv"; else tail -n +2 "$work/comm$n.csv"; fi
    first=0
  done >"$csv"
}
sweep "" "$samples" "${ranks[@]}"
# imerge-overlap's halves, each measured on its own (Open MPI's reduce-scatter is no half).
sweep "--collective reduce-scatter" "$stem-reduce-scatter.csv" "${ranks[@]}"
sweep "--collective all-gather" "$stem-all-gather.csv" "${ranks[@]}"
contention_flag=()
if ((with_contention)); then
  sweep --beside-compute "$contention" "${ranks[@]}"
  contention_flag=(--contention "$contention")
fi

workers=$(IFS=,; echo "1,${ranks[*]}")
largest=${ranks[${#ranks[@]} - 1]}
scale() {
  "$build/imerge-scale" --model resnet18 --image-size 32 --batch-size 16 --workers "$workers" \
    --measure-up-to "$largest" --max-steps 12 --comm-model "$samples" "${contention_flag[@]}" \
    --reduce-scatter-model "$stem-reduce-scatter.csv" --all-gather-model "$stem-all-gather.csv" \
    --launcher "$launcher" --out "$stem-scale"
}
# On 2 cores one size's median can land 2x off its neighbours (the sweep shares the cores with
# the kernel's TCP stack and, beside compute, with busy threads). imerge-scale then refuses the
# fit before any run starts ("measure more sizes around it") rather than plan with it; the sweep
# it names is measured again, at most twice. Any other failure stops the script.
for attempt in 1 2 3; do
  status=0
  scale 2>&1 | tee "$work/scale.out" || status=$?
  ((status)) || break
  refused=$(grep -o -- "-\(commbench\|contention\)\.csv: the fit at .*measure more sizes" \
    "$work/scale.out" | head -n 1 || true)
  if [[ -z $refused ]] || ((attempt == 3)); then exit "$status"; fi
  echo "slow-network-agreement: a noisy sweep was refused (attempt $attempt of 3);" \
    "measuring it again" >&2
  if [[ $refused == -contention.csv:* ]]; then
    sweep --beside-compute "$contention" "${ranks[@]}"
  else
    sweep "" "$samples" "${ranks[@]}"
  fi
done

# Every measured run paired with its simulation; zero pairs is a failure, not a pass.
/usr/bin/python3 scripts/compare-simulated.py "$stem-scale.csv" ${bound:+--bound "$bound"}
