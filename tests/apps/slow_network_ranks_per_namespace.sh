#!/usr/bin/env bash
# slow_network_ranks_per_namespace.sh IMERGE_COMMBENCH WORKDIR: scripts/slow-network.sh
# --ranks-per-namespace refuses an R that does not divide N, puts ranks 0..R-1 in namespace 0,
# R..2R-1 in namespace 1 (each a node of its own to Open MPI), and keeps the ranks of one
# namespace off its rate-limited link (the script joins them by shared memory): two ranks in one
# namespace all-reduce 16 MiB at least twice as fast as two ranks in two namespaces over the
# 1 Gbit/s link (measured 8-29 against 141-151 ms; the link alone allows no less than about
# 134 ms).
# Skipped (exit 77), saying why, where network namespaces cannot be made (root and iproute2).
set -euo pipefail
commbench=$1
workdir=$2
source "$(dirname "$0")/skip_without_netns.sh"
rm -rf "$workdir"
mkdir -p "$workdir"
slow=$(dirname "$0")/../../scripts/slow-network.sh
export OMP_NUM_THREADS=1

# A count that does not divide the ranks is refused, naming both flags, before any namespace.
if message=$("$slow" --ranks 3 --ranks-per-namespace 2 -- /bin/true 2>&1); then
  echo "FAIL: --ranks 3 --ranks-per-namespace 2 was accepted"; exit 1
fi
[[ $message == *"--ranks-per-namespace 2: a divisor of --ranks 3"* ]] ||
  { echo "FAIL: unexpected refusal: $message"; exit 1; }

# Where each rank runs: its rank and its namespace's address.
"$slow" --ranks 4 --ranks-per-namespace 2 -- /bin/sh -c \
  'echo "rank $OMPI_COMM_WORLD_RANK at $(ip -o -4 addr show | grep -o "10\.213\.77\.[0-9]*")"' \
  >"$workdir/placement.txt"
sort "$workdir/placement.txt"
expected=$'rank 0 at 10.213.77.1\nrank 1 at 10.213.77.1\nrank 2 at 10.213.77.2\nrank 3 at 10.213.77.2'
[[ $(sort "$workdir/placement.txt") == "$expected" ]] ||
  { echo "FAIL: ranks not placed two per namespace in rank order"; exit 1; }

# seconds_of R: the median time of a 16 MiB all-reduce of 2 ranks, R per namespace.
seconds_of() {
  "$slow" --ranks 2 --ranks-per-namespace "$1" -- "$commbench" --backend host \
    --min-bytes 16777216 --max-bytes 16777216 --repetitions 5 --out "$workdir/r$1" \
    >"$workdir/r$1.out" 2>&1 || { cat "$workdir/r$1.out"; exit 1; }
  awk -F, 'NR == 2 { print $3 }' "$workdir/r$1.csv"
}
together=$(seconds_of 2)
apart=$(seconds_of 1)
echo "16 MiB all-reduce of 2 ranks: $together s in one namespace, $apart s over the link"
awk -v a="$together" -v b="$apart" 'BEGIN { exit !(2 * a < b) }' ||
  { echo "FAIL: the ranks of one namespace talk over the rate-limited link"; exit 1; }
