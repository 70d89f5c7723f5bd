#!/usr/bin/env bash
# The README's second command (and CI's): install what is missing, build the optimised and the
# sanitizer configurations, and run the whole test suite in both; then fuzz each file reader
# for a minute (fuzz/). The end-to-end training test
# (label "slow") runs only in the optimised build, where it takes about a minute, and so do the
# multi-rank tests (label "mpi"): Open MPI's own allocations look like leaks to LeakSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh

# run_ctest BUILD NAME [CTEST ARGS...]: ctest in BUILD, then how many tests it skipped and why
# (scripts/test-summary.py, from ctest's JUnit file BUILD/junit-NAME.xml), pass or fail.
run_ctest() {
  local build=$1 name=$2 status=0
  shift 2
  (cd "$build" && ctest --output-on-failure --output-junit "$PWD/junit-$name.xml" "$@") || status=$?
  /usr/bin/python3 scripts/test-summary.py "$build/junit-$name.xml"
  return "$status"
}

start=$SECONDS
scripts/build.sh release
# Two test processes at a time, one OpenMP thread each: two processes of two threads on two
# cores spin-wait on each other and run up to 100x slower. The training test runs alone, with
# its own two threads.
export OMP_NUM_THREADS=1
run_ctest build/release release -j 2 -LE slow
run_ctest build/release release-slow -L slow
# imerge-scale's simulation is planning, profiling and the models: no communication library.
if ldd build/release/imerge-scale | grep -E "libmpi|libnccl"; then
  echo "run-tests: imerge-scale links a communication library" >&2
  exit 1
fi
echo "run-tests: release build and tests took $((SECONDS - start)) s"

# The planning library alone (docs/design.md, "Layout"): it builds and passes its tests where
# no MPI, CUDA or oneDNN is looked for, and its test programs load none of them.
start=$SECONDS
scripts/build.sh planning
run_ctest build/planning planning -j 2
if ldd build/planning/tests/distributed/planning/planner_test | grep -E "libmpi|libcuda|libnccl|libdnnl"; then
  echo "run-tests: the planning tests load a communication or device library" >&2
  exit 1
fi
echo "run-tests: planning-only build and tests took $((SECONDS - start)) s"

start=$SECONDS
scripts/build.sh asan
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
run_ctest build/asan asan -j 2 -LE "slow|mpi"
echo "run-tests: sanitizer build and tests took $((SECONDS - start)) s"

# Each reader's libFuzzer target for 60 s from the committed corpus (fuzz/corpus/): its inputs
# replay first, the fuzzers' earlier findings among them, then new inputs are tried.
start=$SECONDS
scripts/build.sh fuzz
scripts/run-fuzzers.sh 60
echo "run-tests: fuzz build and 4 fuzzers took $((SECONDS - start)) s"
