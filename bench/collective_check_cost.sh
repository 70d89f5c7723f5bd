#!/usr/bin/env bash
# The cost of the collective shape check (MpiOptions::checkCollectiveShapes, imerge-train's
# --dist-check-collectives) in a real data-parallel step (bench/dist_flag_cost.sh says how).
#   bench/collective_check_cost.sh [ROUNDS] [STEPS]     (default 3 rounds of 40 steps)
exec "$(dirname "$0")/dist_flag_cost.sh" --dist-check-collectives "$@"
