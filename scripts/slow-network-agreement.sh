#!/usr/bin/env bash
# The simulator against real runs over a rate-limited network (issue 5's check): for each rank
# count, measures the all-reduce cost over scripts/slow-network.sh's links with imerge-commbench,
# then lets imerge-scale train every strategy for real through the same links (ResNet-18 with
# the small-image stem on synthetic 32x32 images) and simulate the same runs from each run's
# own compute profile and the measured model, and prints simulated against measured.
#   scripts/slow-network-agreement.sh [RATE] [RANKS...]     default: 1gbit 2 3 4
# Writes docs/data/slow-network-<RATE>-commbench.csv and docs/data/slow-network-<RATE>-scale.{csv,json}.
set -euo pipefail
cd "$(dirname "$0")/.."
rate=${1:-1gbit}
shift || true
ranks=("$@")
((${#ranks[@]})) || ranks=(2 3 4)
build=build/release
[[ -x $build/imerge-scale && -x $build/imerge-commbench ]] || scripts/build.sh release
export OMP_NUM_THREADS=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
samples=docs/data/slow-network-$rate-commbench.csv

first=1
for n in "${ranks[@]}"; do
  echo "slow-network-agreement: all-reduce sweep on $n ranks at $rate" >&2
  scripts/slow-network.sh --ranks "$n" --rate "$rate" -- "$build/imerge-commbench" \
    --backend host --max-bytes 67108864 --out "$work/comm$n" >"$work/comm$n.out" 2>&1 ||
    { cat "$work/comm$n.out"; exit 1; }
  if ((first)); then cat "$work/comm$n.csv"; else tail -n +2 "$work/comm$n.csv"; fi
  first=0
done >"$samples"

workers=$(IFS=,; echo "1,${ranks[*]}")
largest=${ranks[${#ranks[@]} - 1]}
"$build/imerge-scale" --model resnet18 --image-size 32 --batch-size 16 --workers "$workers" \
  --measure-up-to "$largest" --max-steps 12 --comm-model "$samples" \
  --launcher "scripts/slow-network.sh --ranks {ranks} --rate $rate --" \
  --out "docs/data/slow-network-$rate-scale"

/usr/bin/python3 - "docs/data/slow-network-$rate-scale.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
measured = {(r["workers"], r["strategy"]): float(r["seconds_per_iteration"]) for r in rows if r["source"] == "measured"}
print(f"{'ranks':>5} {'strategy':<9} {'measured ms':>12} {'simulated ms':>13} {'difference':>10}")
for r in rows:
    key = (r["workers"], r["strategy"])
    if r["source"] != "simulated" or key not in measured or r["workers"] == "1":
        continue
    m, s = measured[key], float(r["seconds_per_iteration"])
    print(f"{r['workers']:>5} {r['strategy']:<9} {1e3*m:12.1f} {1e3*s:13.1f} {100*(s-m)/m:+9.1f}%")
PY
