#!/usr/bin/env bash
# scale_matches_real_run.sh MPIEXEC IMERGE_COMMBENCH IMERGE_SCALE WORKDIR: measures this
# machine's all-reduce cost at 2 ranks, then lets imerge-scale run every strategy for real on 2
# ranks (ResNet-20, 32x32 synthetic images) and simulate the same runs from each run's own
# compute profile and the measured communication model, the real runs planning from that
# model too (each run says so). Passes when every simulated time per
# iteration is within 40% of the measured one (a loose bound: the issue's target is 15%, and
# other work on the machine, such as a parallel build, slows the real runs only).
set -euo pipefail
mpiexec=$1
commbench=$2
scale=$3
workdir=$4
rm -rf "$workdir"
mkdir -p "$workdir"
export OMP_NUM_THREADS=1
"$mpiexec" --allow-run-as-root --oversubscribe --bind-to none -np 2 "$commbench" --backend host \
  --max-bytes 16777216 --repetitions 10 --out "$workdir/comm" >"$workdir/commbench.out" 2>&1
"$scale" --model resnet20 --image-size 32 --batch-size 32 --workers 2 --measure-up-to 2 \
  --comm-model "$workdir/comm.csv" --mpirun "$mpiexec" --out "$workdir/scale"
# Each real run planned from the measurement its simulation plans from, not its own start-up one.
for out in "$workdir"/scale.runs/*_imerge_2w.out "$workdir"/scale.runs/*_mgwfbp_2w.out; do
  grep -q "communication model (from $workdir/comm.csv)" "$out" ||
    { echo "FAIL: $out did not plan from $workdir/comm.csv:"; grep "^dist:" "$out"; exit 1; }
done
# Eight strategies at 2 ranks, each measured and simulated.
/usr/bin/python3 "$(dirname "$0")/../../scripts/compare-simulated.py" "$workdir/scale.csv" \
  --bound 40 --expect 8
