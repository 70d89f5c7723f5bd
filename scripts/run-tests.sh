#!/usr/bin/env bash
# The README's second command (and CI's): install what is missing, build the optimised and the
# sanitizer configurations, and run the whole test suite in both. The end-to-end training test
# (label "slow") runs only in the optimised build, where it takes about a minute, and so do the
# multi-rank tests (label "mpi"): Open MPI's own allocations look like leaks to LeakSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh

start=$SECONDS
scripts/build.sh release
# Two test processes at a time, one OpenMP thread each: two processes of two threads on two
# cores spin-wait on each other and run up to 100x slower. The training test runs alone, with
# its own two threads.
export OMP_NUM_THREADS=1
(cd build/release && ctest --output-on-failure -j 2 -LE slow && ctest --output-on-failure -L slow)
echo "run-tests: release build and tests took $((SECONDS - start)) s"

start=$SECONDS
scripts/build.sh asan
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
(cd build/asan && ctest --output-on-failure -j 2 -LE "slow|mpi")
echo "run-tests: sanitizer build and tests took $((SECONDS - start)) s"
