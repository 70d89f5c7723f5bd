#!/usr/bin/env bash
# gpu_gate.sh with|without COMMAND...: runs COMMAND only on a machine with (or without) a usable
# NVIDIA GPU, and otherwise exits 77, which CTest reports as skipped (SKIP_RETURN_CODE 77),
# saying why. A GPU counts as usable when nvidia-smi lists one.
set -u
mode=$1
shift
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
  have_gpu=1
else
  have_gpu=0
fi
case "$mode" in
  with)
    if ((!have_gpu)); then
      echo "skipped: needs an NVIDIA GPU, and nvidia-smi lists none here"
      exit 77
    fi ;;
  without)
    if ((have_gpu)); then
      echo "skipped: checks the behaviour without a GPU, and this machine has one"
      exit 77
    fi ;;
  *) echo "gpu_gate.sh: first argument must be 'with' or 'without', got '$mode'" >&2; exit 2 ;;
esac
exec "$@"
