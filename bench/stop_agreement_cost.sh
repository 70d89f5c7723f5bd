#!/usr/bin/env bash
# The cost of the graceful stop (imerge-train's --graceful-stop: one 8-byte all-reduce per step,
# distributed/runtime/stop_agreement.h) in a real data-parallel step (bench/dist_flag_cost.sh
# says how).
#   bench/stop_agreement_cost.sh [ROUNDS] [STEPS]     (default 3 rounds of 40 steps)
exec "$(dirname "$0")/dist_flag_cost.sh" --graceful-stop "$@"
