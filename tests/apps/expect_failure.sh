#!/usr/bin/env bash
# expect_failure.sh PATTERN COMMAND...: passes when COMMAND exits non-zero (and was not killed
# by a signal, i.e. did not crash) and its output matches the extended regex PATTERN.
set -u
pattern=$1
shift
output=$("$@" 2>&1)
status=$?
echo "$output"
if ((status == 0)); then
  echo "expect_failure: '$*' succeeded; expected an error" >&2
  exit 1
fi
if ((status > 128)); then
  echo "expect_failure: '$*' died with signal $((status - 128)); expected a clean error" >&2
  exit 1
fi
if ! grep -Eq -- "$pattern" <<<"$output"; then
  echo "expect_failure: the output does not match '$pattern'" >&2
  exit 1
fi
echo "expect_failure: exit $status with the expected message"
