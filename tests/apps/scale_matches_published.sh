#!/bin/sh
# The ddl-resnet50-10gbe preset (ResNet-50 at 4-32 workers over 10GbE, three strategies) against
# the images/s MG-WFBP's paper measured: scripts/compare-published.py prints each cell's log
# ratio and fails above a mean of 0.2 or when the strategies rank differently at 8-32 workers.
# usage: scale_matches_published.sh IMERGE_SCALE COMPARE_PUBLISHED OUT_DIR
set -eu
scale=$1 compare=$2 out=$3
mkdir -p "$out"
"$scale" --preset ddl-resnet50-10gbe --out "$out/ddl" > "$out/scale.log"
/usr/bin/python3 "$compare" "$out/ddl.csv" --expect 12
