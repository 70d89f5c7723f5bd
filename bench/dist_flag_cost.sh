#!/usr/bin/env bash
# The cost of one imerge-train flag in a real data-parallel step: ResNet-20 on synthetic 32x32
# images, batch 32 per rank, 2 ranks of one thread, strategy wfbp (one all-reduce per gradient
# tensor: the most collectives per step of any strategy). Runs with FLAG true and false
# alternate, ROUNDS times each, so drift of the machine's speed falls on both alike; prints the
# mean iteration time of each run (warm-up left out) and the ratio of the means.
#   bench/dist_flag_cost.sh FLAG [ROUNDS] [STEPS]     (default 3 rounds of 40 steps)
# bench/collective_check_cost.sh and bench/stop_agreement_cost.sh call it for their flag.
set -euo pipefail
cd "$(dirname "$0")/.."
flag=$1
rounds=${2:-3}
steps=${3:-40}
train=build/release/imerge-train
[[ -x $train ]] || scripts/build.sh release
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for round in $(seq 1 "$rounds"); do
  for value in true false; do
    mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2 "$train" --dist wfbp \
      --model resnet20 --dataset synthetic --image-size 32 --batch-size 32 --epochs 1 \
      --max-steps "$steps" --threads 1 --workers 1 --eval-every 1000 \
      "$flag" "$value" --log-json "$work/$value-$round.json" >/dev/null
  done
done
/usr/bin/python3 - "$work" "$rounds" "$flag" <<'PY'
import json, statistics, sys
work, rounds, flag = sys.argv[1], int(sys.argv[2]), sys.argv[3]
warm = 6  # the warm-up and the step that rebuilds the plan
means = {"true": [], "false": []}
for round in range(1, rounds + 1):
    for value in ("true", "false"):
        epoch = json.load(open(f"{work}/{value}-{round}.json"))["epochs"][0]["distributed"]
        iterations = epoch["per_iteration"]["iteration_s"][warm:]
        means[value].append(statistics.mean(iterations))
        print(f"round {round} {flag} {value:<5} {1e3 * means[value][-1]:8.2f} ms per iteration, "
              f"{epoch['buckets']} collectives per step")
on, off = statistics.mean(means["true"]), statistics.mean(means["false"])
print(f"{flag} true {1e3 * on:.2f} ms, false {1e3 * off:.2f} ms: true/false = {on / off:.4f} "
      f"({100 * (on - off) / off:+.2f}% of a step)")
PY
