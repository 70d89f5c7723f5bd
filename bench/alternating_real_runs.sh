#!/usr/bin/env bash
# Repeated, alternating real runs of a few strategies at one rank count over the rate-limited
# links of scripts/slow-network.sh: one strategy's gap to another that is smaller than this
# VM's drift between two runs (up to 2x) shows only when each round runs every strategy once,
# one after another, and the rounds are compared with each other.
#   bench/alternating_real_runs.sh STEM [RANKS] [ROUNDS] [STRATEGIES]
#     STEM        the measured models of scripts/slow-network-agreement.sh: STEM-commbench.csv,
#                 STEM-contention.csv, STEM-reduce-scatter.csv, STEM-all-gather.csv
#     RANKS       default 4; ROUNDS default 3
#     STRATEGIES  default ddp,mgwfbp,wfbp,imerge-overlap (comma-separated)
# Environment: BUILD=DIR (build/release), RATE (1gbit), OUT=DIR for each round's imerge-scale
# CSV and the summary (default: a temporary folder, printed).
# Prints each round's measured ms per iteration per strategy, each strategy's median over the
# rounds, and how many rounds each strategy was the fastest in.
set -euo pipefail
cd "$(dirname "$0")/.."
stem=${1:?usage: bench/alternating_real_runs.sh STEM [RANKS] [ROUNDS] [STRATEGIES]}
ranks=${2:-4}
rounds=${3:-3}
strategies=${4:-ddp,mgwfbp,wfbp,imerge-overlap}
build=${BUILD:-build/release}
rate=${RATE:-1gbit}
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
for part in commbench contention reduce-scatter all-gather; do
  [[ -f $stem-$part.csv ]] || { echo "alternating_real_runs: $stem-$part.csv is missing" >&2; exit 1; }
done
export OMP_NUM_THREADS=1
for ((round = 1; round <= rounds; ++round)); do
  echo "alternating_real_runs: round $round of $rounds ($strategies on $ranks ranks, $rate)" >&2
  "$build/imerge-scale" --model resnet18 --image-size 32 --batch-size 16 --workers "$ranks" \
    --measure-up-to "$ranks" --max-steps 12 --strategies "$strategies" \
    --comm-model "$stem-commbench.csv" --contention "$stem-contention.csv" \
    --reduce-scatter-model "$stem-reduce-scatter.csv" --all-gather-model "$stem-all-gather.csv" \
    --launcher "scripts/slow-network.sh --ranks {ranks} --rate $rate --" \
    --out "$out/round$round" >"$out/round$round.log" 2>&1 ||
    { tail -n 30 "$out/round$round.log"; exit 1; }
done
/usr/bin/python3 - "$out" "$rounds" <<'EOF' | tee "$out/summary.md"
import csv, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
times = {}  # strategy -> [ms per round]
for r in range(1, rounds + 1):
    with open(f"{out}/round{r}.csv", newline="") as file:
        for row in csv.DictReader(file):
            if row["source"] == "measured" and int(row["workers"]) > 1:
                times.setdefault(row["strategy"], []).append(1e3 * float(row["seconds_per_iteration"]))
names = list(times)
print("| round | " + " | ".join(names) + " | fastest |")
print("|---" * (len(names) + 2) + "|")
wins = dict.fromkeys(names, 0)
for r in range(rounds):
    row = {n: times[n][r] for n in names}
    best = min(row, key=row.get)
    wins[best] += 1
    print(f"| {r + 1} | " + " | ".join(f"{row[n]:.1f}" for n in names) + f" | {best} |")
medians = {n: statistics.median(times[n]) for n in names}
print("| median | " + " | ".join(f"{medians[n]:.1f}" for n in names) + " | " +
      min(medians, key=medians.get) + " |")
print()
print("rounds won: " + ", ".join(f"{n} {wins[n]}" for n in names))
EOF
echo "alternating_real_runs: CSVs and logs in $out" >&2
