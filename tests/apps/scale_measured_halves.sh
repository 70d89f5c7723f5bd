#!/usr/bin/env bash
# scale_measured_halves.sh IMERGE_SCALE DATA WORKDIR: imerge-scale plans and simulates
# imerge-overlap on the 1 Gbit/s cluster measured in DATA (docs/data/imerge-overlap-1gbit) twice:
# with the ring rule's halves, where splitting VGG-16's buckets ties with deferring them and the
# plan splits some, and with the measured reduce-scatter and all-gather, where Open MPI's
# reduce-scatter costs about a whole all-reduce and no bucket may split. The simulated traces
# show which: reduce-scatter events in the first, none in the second.
set -euo pipefail
scale=$1
data=$2
workdir=$3
rm -rf "$workdir"
mkdir -p "$workdir"
common=(--model vgg16 --image-size 32 --batch-size 16 --device-gflops 20 --workers 2
  --strategies imerge-overlap --cluster "$data/slow-network-1gbit-commbench.csv")
"$scale" "${common[@]}" --trace-dir "$workdir/ring" --out "$workdir/ring" >"$workdir/ring.out"
"$scale" "${common[@]}" --reduce-scatter-model "$data/slow-network-1gbit-reduce-scatter.csv" \
  --all-gather-model "$data/slow-network-1gbit-all-gather.csv" --trace-dir "$workdir/measured" \
  --out "$workdir/measured" >"$workdir/measured.out"
splits() { { grep -o '"reducescatter"' "$1/vgg16_imerge-overlap_2w.json" || true; } | wc -l; }
ring=$(splits "$workdir/ring")
measured=$(splits "$workdir/measured")
echo "reduce-scatters in the simulated trace: $ring with the ring rule's halves, $measured measured"
((ring > 0)) || { echo "FAIL: the ring rule's plan split nothing (the case tests nothing)"; exit 1; }
((measured == 0)) || { echo "FAIL: a bucket was split although its reduce-scatter costs an all-reduce"; exit 1; }
