#!/usr/bin/env bash
# gpu_check_without_gpu.sh REPO WORKDIR: scripts/gpu-check.sh on a machine without a usable GPU
# must say so plainly, exit 2 at once (before configuring or building anything) and still leave
# its report, with the reason, in the --out folder. The missing GPU is simulated with an
# NVIDIA_SMI that does not exist and with one that fails as nvidia-smi does without a driver,
# so the test means the same on a GPU machine; where this
# machine's own nvidia-smi is absent or finds no GPU (CI, the development machines), the real
# path is checked too.
set -u
repo=$1 work=$2
rm -rf "$work" && mkdir -p "$work"
failures=0

check() {  # check NAME [VAR=VALUE...]: one run of gpu-check.sh without a GPU
  local name=$1
  shift
  local start=$SECONDS output status
  output=$(env "$@" bash "$repo/scripts/gpu-check.sh" --out "$work/$name" \
    --build-dir "$work/$name-build" 2>&1)
  status=$?
  echo "--- $name: exit $status after $((SECONDS - start)) s"
  echo "$output"
  if ((status != 2)); then
    echo "gpu_check_without_gpu: $name: exit $status, expected 2" >&2
    failures=$((failures + 1))
  fi
  if ! grep -q "no usable GPU: .*nvidia-smi" <<<"$output"; then
    echo "gpu_check_without_gpu: $name: no 'no usable GPU: ... nvidia-smi ...' message" >&2
    failures=$((failures + 1))
  fi
  if ! grep -q "| gpu | FAILED | 0 | no usable GPU" "$work/$name/report.md" 2>/dev/null; then
    echo "gpu_check_without_gpu: $name: $work/$name/report.md does not record the reason" >&2
    failures=$((failures + 1))
  fi
  if [[ -e $work/$name-build ]]; then
    echo "gpu_check_without_gpu: $name: it configured or built before finding no GPU" >&2
    failures=$((failures + 1))
  fi
  if ((SECONDS - start > 30)); then
    echo "gpu_check_without_gpu: $name: took $((SECONDS - start)) s to give up" >&2
    failures=$((failures + 1))
  fi
}

check simulated-missing NVIDIA_SMI="$work/no-such-nvidia-smi"
cat >"$work/nvidia-smi" <<'SMI'
#!/bin/sh
echo "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."
exit 9
SMI
chmod +x "$work/nvidia-smi"
check simulated-no-driver NVIDIA_SMI="$work/nvidia-smi"
if ! nvidia-smi --query-gpu=name --format=csv,noheader >/dev/null 2>&1; then
  check real
fi
if ((failures)); then
  exit 1
fi
echo "gpu_check_without_gpu: clear message, exit 2, report written, nothing built"
