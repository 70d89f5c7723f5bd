#!/usr/bin/env bash
# gpu_check_with_fakes.sh REPO WORKDIR: scripts/gpu-check.sh's own logic (stages, time limits,
# the benchmark table and ratios, the ResNet-50 criterion, the determinism comparison, the
# report) on a machine without a GPU, with stand-ins on the PATH for nvidia-smi, cmake, ctest,
# mpirun, python3 (PyTorch's benchmark and probe) and the built programs. The real programs
# only run on a GPU machine; this checks what the script does with their answers:
#   1. all good: exit 0, every stage ok, the table, "met", "identical"
#   2. ResNet-50 at 0.8x PyTorch and two training runs that differ: exit 1, both recorded
#   3. a GPU test suite that hangs: its stage is stopped at the budget, the rest is recorded as
#      not run, and the script ends soon after the budget
set -u
repo=$1 work=$2
rm -rf "$work" && mkdir -p "$work/bin" "$work/programs"
failures=0
fail() { echo "gpu_check_with_fakes: $*" >&2; failures=$((failures + 1)); }

# ---- stand-ins --------------------------------------------------------------------------------
cat >"$work/bin/nvidia-smi" <<'EOF'
#!/bin/sh
case "$*" in *--query-gpu*) echo "NVIDIA H200, 580.159.03, 143771 MiB" ;; *) echo "fake" ;; esac
EOF
# cmake: configure does nothing; --build copies the fake programs into the build folder.
cat >"$work/bin/cmake" <<EOF
#!/bin/sh
if [ "\$1" = --build ]; then
  mkdir -p "\$2/bench"
  cp "$work/programs/imerge-train" "$work/programs/imerge-commbench" "\$2/"
  cp "$work/programs/imerge-step-bench" "\$2/bench/"
fi
exit 0
EOF
cat >"$work/bin/ctest" <<'EOF'
#!/bin/sh
if [ -n "${FAKE_CTEST_HANG:-}" ]; then sleep 1000; fi
echo "100% tests passed, 0 tests failed out of 8"
EOF
# mpirun: runs the program after its own flags.
cat >"$work/bin/mpirun" <<'EOF'
#!/bin/sh
while [ $# -gt 0 ]; do case "$1" in -np|--bind-to) shift 2 ;; -*) shift ;; *) exec "$@" ;; esac; done
EOF
# python3: PyTorch's benchmark and probe answer, anything else is the real interpreter.
cat >"$work/bin/fake-python" <<'EOF'
#!/usr/bin/env bash
case "$1" in
  */pytorch_step_bench.py)
    shift
    network=$(sed -E 's/.*--network ([^ ]+).*/\1/' <<<"$*")
    batch=$(sed -E 's/.*--batch ([0-9]+).*/\1/' <<<"$*")
    small=false size=224
    [[ " $* " == *" --small-images "* ]] && small=true size=32
    echo "{\"framework\": \"pytorch 2.11.0 (fake)\", \"network\": \"$network\", \"batch\": $batch, \"image_size\": $size, \"small_images\": $small, \"threads\": 2, \"median_ms\": 100.0, \"peak_bytes\": 2000000000}"
    exit 0 ;;
  -c)
    if [[ $2 == *"import torch"* ]]; then echo "torch 2.11.0 (fake)"; exit 0; fi
    if [[ $2 == *"import nvidia"* ]]; then exit 1; fi ;;
esac
exec python3 "$@"
EOF
cat >"$work/programs/imerge-step-bench" <<'EOF'
#!/usr/bin/env bash
network=$(sed -E 's/.*--network ([^ ]+).*/\1/' <<<"$*")
batch=$(sed -E 's/.*--batch ([0-9]+).*/\1/' <<<"$*")
small=false size=224
[[ " $* " == *" --small-images "* ]] && small=true size=32
ms=95.0
[[ $network == resnet50 && -n ${FAKE_SLOW_RESNET:-} ]] && ms=125.0
echo "{\"framework\": \"imerge\", \"network\": \"$network\", \"device\": \"cuda:0\", \"batch\": $batch, \"image_size\": $size, \"small_images\": $small, \"threads\": 2, \"median_ms\": $ms, \"peak_bytes\": 1500000000}"
EOF
cat >"$work/programs/imerge-train" <<'EOF'
#!/usr/bin/env bash
log=$(sed -E 's/.*--log-json ([^ ]+).*/\1/' <<<"$*")
loss=2.302585
[[ -n ${FAKE_NONDETERMINISTIC:-} ]] && loss=2.30$RANDOM
echo "{\"run\": {}, \"epochs\": [{\"epoch\": 1, \"train_loss\": $loss, \"train_accuracy\": 0.125, \"test_loss\": 2.25, \"test_accuracy\": 0.1}]}" >"$log"
EOF
cat >"$work/programs/imerge-commbench" <<'EOF'
#!/bin/sh
echo "nccl, 1 workers, 40 samples at 40 sizes:"
echo "  linear     RMS relative error    5.00%  linear: 10 us + M / 900 GB/s"
EOF
chmod +x "$work"/bin/* "$work"/programs/*

run() {  # run NAME [VAR=VALUE...] -- [gpu-check flags]: sets status, output, report
  local name=$1
  shift
  local vars=()
  while [[ $1 != -- ]]; do vars+=("$1"); shift; done
  shift
  local start=$SECONDS
  output=$(env PATH="$work/bin:$PATH" NVIDIA_SMI=nvidia-smi PYTHON="$work/bin/fake-python" \
    "${vars[@]}" bash "$repo/scripts/gpu-check.sh" --out "$work/$name" \
    --build-dir "$work/$name-build" --deps "$work/no-bundle" "$@" 2>&1)
  status=$?
  took=$((SECONDS - start))
  report=$(cat "$work/$name/report.md" 2>/dev/null)
  echo "--- $name: exit $status after $took s"
  echo "$output"
}
expect() {  # expect NAME PATTERN: the report of run NAME matches the extended regex PATTERN
  grep -Eq -- "$2" <<<"$report" || fail "$1: the report has no '$2'"
}

run good -- --quick
((status == 0)) || fail "good: exit $status, expected 0"
expect good '\| resnet50 \| 224 \| 128 \| 1347 \| 1280 \| 1\.05x \| 1431 \| 1907 \| 0\.75x \|'
expect good '\| vgg16 \| 224 \| 64 \|'
expect good '\| resnet18 \(small-image stem\) \| 32 \| 128 \|'
expect good '\| resnet50-ratio \| ok \|'
expect good 'criterion .*: met, 1\.053x'
expect good 'Determinism .*: identical losses and accuracies \(4 values\)'
expect good 'linear: 10 us'
python3 -c "import json, sys; s = json.load(open(sys.argv[1])); assert not s['failed'] and \
  len(s['stages']) == 10 and len(s['bench']) == 3, s" "$work/good/summary.json" ||
  fail "good: summary.json"

run bad FAKE_SLOW_RESNET=1 FAKE_NONDETERMINISTIC=1 -- --quick
((status == 1)) || fail "bad: exit $status, expected 1"
expect bad '\| resnet50-ratio \| FAILED \| 0 \| 0\.800x'
expect bad 'criterion .*: NOT met'
expect bad '\| determinism \| FAILED \|'
expect bad 'Determinism .*: FAILED \(determinism: the two runs differ'
expect bad '\| commbench \| ok \|'

run hang FAKE_CTEST_HANG=1 -- --quick --budget 25
((status == 1)) || fail "hang: exit $status, expected 1"
expect hang '\| gpu-tests \| FAILED \| [0-9]+ \| timed out after'
expect hang '\| determinism \| FAILED \| 0 \| not run: the 25 s budget was spent'
((took <= 45)) || fail "hang: took $took s with a 25 s budget"

if ((failures)); then
  exit 1
fi
echo "gpu_check_with_fakes: stages, ratios, criterion, determinism, time limits and report as expected"
