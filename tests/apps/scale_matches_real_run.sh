#!/usr/bin/env bash
# scale_matches_real_run.sh MPIEXEC IMERGE_COMMBENCH IMERGE_SCALE WORKDIR: measures this
# machine's all-reduce cost at 2 ranks, then lets imerge-scale run every strategy for real on 2
# ranks (ResNet-20, 32x32 synthetic images) and simulate the same runs from each run's own
# compute profile and the measured communication model. Passes when every simulated time per
# iteration is within 40% of the measured one (a loose bound: the target is 15%, and
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
# Rows come in pairs: measured, then the same (workers, strategy) simulated.
awk -F, 'NR > 1 && $4 == "measured" { measured[$3] = $5 }
         NR > 1 && $4 == "simulated" { simulated[$3] = $5 }
         END {
           bad = 0; n = 0
           for (s in measured) {
             n++
             error = (simulated[s] - measured[s]) / measured[s]
             printf "%-9s measured %.2f ms, simulated %.2f ms (%+.1f%%)\n", s, 1e3 * measured[s], 1e3 * simulated[s], 100 * error
             if (error > 0.4 || error < -0.4) bad = 1
           }
           if (n != 6) { print "expected 6 measured strategies, got " n; exit 1 }
           exit bad
         }' "$workdir/scale.csv"
