#!/usr/bin/env bash
# Runs each libFuzzer target of build/fuzz (scripts/build.sh fuzz) for SECONDS on its corpus,
# fuzz/corpus/<reader>/, and fails when any of them finds an input that crashes, trips a
# sanitizer, leaks, hangs past 10 s or allocates past 2 GB. The committed corpus is only read:
# inputs the run finds new are kept in build/fuzz/corpus-<reader>/ (the next run starts from
# them too), a finding in build/fuzz/findings/ with the command that replays it.
#   scripts/run-fuzzers.sh [SECONDS] [READER...]   (default 60 s each; idx cifar10 image checkpoint)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
readers=("$@")
((${#readers[@]})) || readers=(idx cifar10 image checkpoint)
[[ $seconds =~ ^[1-9][0-9]*$ ]] || { echo "run-fuzzers: SECONDS must be a whole number of seconds, not '$seconds'" >&2; exit 2; }

mkdir -p build/fuzz/findings
failed=()
for reader in "${readers[@]}"; do
  fuzzer=build/fuzz/fuzz/${reader}_fuzzer
  [[ -x $fuzzer ]] || { echo "run-fuzzers: $fuzzer is missing: run scripts/build.sh fuzz" >&2; exit 2; }
  [[ -d fuzz/corpus/$reader ]] || { echo "run-fuzzers: no corpus fuzz/corpus/$reader" >&2; exit 2; }
  found=build/fuzz/corpus-$reader
  mkdir -p "$found"
  echo "run-fuzzers: $reader for $seconds s ($(ls fuzz/corpus/$reader | wc -l) committed inputs)"
  log=build/fuzz/findings/$reader.log
  # One process, so the time is what it says on 2 cores; -timeout is per input.
  if ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
      UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      "$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="build/fuzz/findings/$reader-" "$found" "fuzz/corpus/$reader" >"$log" 2>&1; then
    grep -E "^stat::number_of_executed_units|^#[0-9]+.*DONE" "$log" | tail -2 | sed 's/^/  /'
  else
    failed+=("$reader")
    echo "run-fuzzers: $reader FOUND AN INPUT that fails (log: $log):" >&2
    grep -E "ERROR|SUMMARY|Test unit written|runtime error" "$log" | head -8 | sed 's/^/  /' >&2
    echo "  replay: $fuzzer build/fuzz/findings/$reader-<file>" >&2
  fi
done
if ((${#failed[@]})); then
  echo "run-fuzzers: findings for ${failed[*]}" >&2
  exit 1
fi
echo "run-fuzzers: ${readers[*]}: nothing found in $seconds s each"
