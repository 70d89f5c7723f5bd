#!/usr/bin/env bash
# scripts/check-layers.sh shown able to fail: in a scratch tree, three includes that run upward
# (core to runtime, planning to layers, optim to io) must each be named with its file and line,
# and an include that runs down must not be.
#   upward_include_fails.sh REPOSITORY
set -euo pipefail
repo=$1
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
mkdir -p "$tree"/core "$tree"/distributed/planning "$tree"/optim "$tree"/layers
printf '#pragma once\n#include <vector>\n#include "distributed/runtime/reducer.h"\n' >"$tree/core/tensor.h"
printf '#include "core/error.h"\n#include "layers/module.h"\n' >"$tree/distributed/planning/plan.cpp"
printf '#include "optim/sgd.h"\n\n#include "io/checkpoint.h"\n' >"$tree/optim/sgd.cpp"
printf '#include "core/tensor.h"\n#include "autograd/variable.h"\n' >"$tree/layers/module.h"

status=0
output=$(bash "$repo/scripts/check-layers.sh" "$tree" 2>&1) || status=$?
echo "$output"
fail() { echo "upward_include_fails: $1" >&2; exit 1; }
((status == 1)) || fail "check-layers.sh exited $status, not 1"
for expected in "core/tensor.h:3: core includes distributed/runtime/reducer.h from runtime" \
  "distributed/planning/plan.cpp:2: planning includes layers/module.h from layers" \
  "optim/sgd.cpp:3: optim includes io/checkpoint.h from io"; do
  grep -qF "$expected" <<<"$output" || fail "missing: $expected"
done
! grep -q "^layers/module.h" <<<"$output" || fail "an include that runs down was refused"
[[ $(grep -c "a layer above or beside it" <<<"$output") == 3 ]] || fail "not exactly 3 refusals"
echo "upward_include_fails: the three upward includes were named, the downward ones passed"
