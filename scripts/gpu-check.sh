#!/usr/bin/env bash
# scripts/gpu-check.sh [--out DIR] [--quick] [--build-only] [--budget SECONDS] [--build-dir DIR]
#                      [--build-timeout SECONDS] [--deps DIR]
#
# One command for a GPU machine (issue 6): builds the CUDA release build, runs the GPU test
# suite, the training benchmark side by side with PyTorch, the determinism check and a 1-rank
# NCCL sweep, and writes a dated report into DIR (default build/gpu-check):
#   report.md     date, machine, GPU, driver, CUDA/cuDNN/NCCL origin, every stage's result and
#                 time, the benchmark table with every ratio (imerge/PyTorch images/s and peak
#                 memory), the ResNet-50 throughput criterion (>= 0.9x PyTorch), determinism
#   summary.json  the same as data
#   bench.jsonl   every benchmark run, one JSON line each
#   logs/         each stage's full output (logs/gpu-tests.log: the whole GPU suite)
#
# Stages, each under its own time limit and all inside --budget (default 460 s, so the whole
# check fits 8 minutes; the build's own limit, --build-timeout, is 330 s); a failed or
# timed-out stage is recorded and the next one runs:
#   gpu          nvidia-smi answers with a GPU (else: a clear message, the report, exit 2)
#   deps         with .gpu-deps/ (or --deps DIR) present (scripts/gpu-deps-bundle.sh, carried
#                from a Debian machine): its packages unpacked into BUILD_DIR/deps (never
#                into /) and CMake, the linker and the loader pointed at them; without it,
#                the system's packages
#   cuda-libs    cuDNN and NCCL: the CUDA toolkit's, else those of PyTorch's wheels
#   configure    CMake, Release, IMERGE_CUDA=ON (-march=native: built where it runs)
#   build        only the targets used below
#   gpu-tests    ctest -L gpu
#   bench        imerge-step-bench and bench/pytorch_step_bench.py, alternating, per network:
#                ResNet-50 and VGG-16 at 224x224, ResNet-18 (small-image stem) at 32x32
#                (PyTorch only where `python3` imports torch and torchvision and sees the GPU)
#   resnet50-ratio  imerge's ResNet-50 images/s at least 0.9x PyTorch's at the same batch
#   determinism  imerge-train twice, same seed, --deterministic, synthetic data: the logged
#                losses and accuracies must be identical
#   commbench    mpirun -np 1 imerge-commbench --backend device (NCCL on device buffers)
# --quick: one benchmark round with fewer steps, shorter determinism runs and sweep.
# --build-only: deps, cuda-libs, configure and build alone, no GPU needed (to check a
# machine's build, e.g. scripts/gpu-deps-check-isolated.sh).
# Exit status: 0 when every stage passed, 1 when one failed, 2 without a usable GPU or on bad
# arguments. NVIDIA_SMI names the nvidia-smi to ask (tests point it at a missing file).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
repo=$PWD

out=build/gpu-check
build_dir=build/gpu-release
budget=460
build_timeout=330
deps_dir=.gpu-deps
quick=0
build_only=0
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }
while (($#)); do
  case $1 in
    --out) out=${2:?--out needs a folder}; shift 2 ;;
    --build-dir) build_dir=${2:?--build-dir needs a folder}; shift 2 ;;
    --budget) budget=${2:?--budget needs seconds}; shift 2 ;;
    --build-timeout) build_timeout=${2:?--build-timeout needs seconds}; shift 2 ;;
    --deps) deps_dir=${2:?--deps needs a folder}; shift 2 ;;
    --quick) quick=1; shift ;;
    --build-only) build_only=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "gpu-check.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
[[ $budget =~ ^[0-9]+$ && $build_timeout =~ ^[0-9]+$ ]] ||
  { echo "gpu-check.sh: --budget $budget, --build-timeout $build_timeout: seconds expected" >&2; exit 2; }
[[ $out == /* ]] || out=$repo/$out
[[ $build_dir == /* ]] || build_dir=$repo/$build_dir
[[ $deps_dir == /* ]] || deps_dir=$repo/$deps_dir
mkdir -p "$out/logs" || exit 2
rm -f "$out"/logs/* "$out/bench.jsonl" "$out/bench_rows.jsonl" "$out/report.md" "$out/summary.json"
logs=$out/logs
deadline=$((SECONDS + budget))
started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
python=${PYTHON:-python3}

# ---- the record -----------------------------------------------------------------------------
stage_names=() stage_status=() stage_seconds=() stage_notes=()
failed=0
record() {  # record NAME STATUS SECONDS NOTE   (STATUS: ok, FAILED, skipped)
  stage_names+=("$1") stage_status+=("$2") stage_seconds+=("$3") stage_notes+=("$4")
  [[ $2 == FAILED ]] && failed=1
  printf 'gpu-check: %-15s %-7s %4ss  %s\n' "$1" "$2" "$3" "$4"
}
gpu_name=unknown gpu_driver=unknown gpu_memory=unknown cuda_version=unknown
cuda_libs="not looked for" torch_version="not used" deps_source="system packages"
determinism="not run" ratio_note="not measured"

# Variables the stage functions read in their own bash (run_limited passes them along).
GPU_DEPS_RUN_ENV=()
GPU_DEPS_CMAKE_ARGS=()
cuda_cmake_args=()
shared_vars=(repo out logs build_dir quick python GPU_DEPS_RUN_ENV GPU_DEPS_CMAKE_ARGS
             cuda_cmake_args)

# run_limited LIMIT LOG FUNCTION [ARGS...]: FUNCTION in a child bash under timeout (which
# signals the child's whole process group: ninja, ctest, mpirun and what they started), its
# output to LOG. Returns FUNCTION's status; 124 when it ran out of time.
run_limited() {
  local limit=$1 log=$2
  shift 2
  timeout --kill-after=10 "$limit" bash -c \
    "$(declare -p "${shared_vars[@]}"); $(declare -f); set -o pipefail; \"\$@\"" _ "$@" \
    >>"$log" 2>&1
}

# stage NAME LIMIT FUNCTION [ARGS...]: runs and records one stage; its log is logs/NAME.log.
stage() {
  local name=$1 limit=$2
  shift 2
  local left=$((deadline - SECONDS))
  if ((left < 15)); then
    record "$name" FAILED 0 "not run: the ${budget} s budget was spent"
    return 1
  fi
  ((limit > left)) && limit=$left
  local start=$SECONDS status
  run_limited "$limit" "$logs/$name.log" "$@"
  status=$?
  local took=$((SECONDS - start))
  if ((status == 0)); then
    record "$name" ok "$took" "${stage_note:-}"
  elif ((status == 124 || status == 137)); then
    record "$name" FAILED "$took" "timed out after ${limit} s (logs/$name.log)"
  else
    record "$name" FAILED "$took" "exit $status (logs/$name.log${stage_note:+; $stage_note})"
  fi
  stage_note=
  return "$status"
}
stage_note=

# ---- stage bodies (each runs in its own bash, see run_limited) ------------------------------
in_run_env() { env "${GPU_DEPS_RUN_ENV[@]}" "$@"; }

do_configure() {
  local launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache
                                           -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
  # CMAKE_POLICY_VERSION_MINIMUM: CMake 4 refuses package files that ask for policies of
  # CMake < 3.5; older CMake ignores the variable.
  cmake -S "$repo" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DIMERGE_CUDA=ON \
    -DIMERGE_BUILD_TESTS=ON -DIMERGE_BUILD_BENCH=ON -DCMAKE_POLICY_VERSION_MINIMUM=3.5 \
    "${launcher[@]}" "${GPU_DEPS_CMAKE_ARGS[@]}" "${cuda_cmake_args[@]}"
}

# The programs of the tests labelled gpu: tests/cuda's, and the multi-rank GPU ones.
gpu_test_targets() {
  local source
  for source in "$repo"/tests/cuda/*_test.cpp "$repo"/tests/distributed/*/*gpu_mpitest.cpp; do
    basename "$source" .cpp
  done
}

do_build() {
  # With the bundle's libraries on the loader's path: the build runs the GPU test programs to
  # list their tests (gtest_discover_tests).
  # shellcheck disable=SC2046
  in_run_env cmake --build "$build_dir" -j "$(nproc)" --target imerge-train imerge-step-bench \
    imerge-commbench $(gpu_test_targets)
}

do_gpu_tests() {
  in_run_env ctest --test-dir "$build_dir" -L gpu --output-on-failure --timeout 240 \
    --output-junit "$out/logs/ctest-gpu.xml"
}

# One benchmark process: imerge or pytorch, network, then the flags of both benchmarks.
bench_one() {
  local framework=$1 limit=$2
  shift 2
  local line
  if [[ $framework == imerge ]]; then
    # --foreground: in the stage's process group, so the stage's own timeout reaches it too.
    line=$(timeout --foreground "$limit" env "${GPU_DEPS_RUN_ENV[@]}" \
      "$build_dir/bench/imerge-step-bench" --device cuda "$@" | tail -1)
  else
    line=$(timeout --foreground "$limit" "$python" "$repo/bench/pytorch_step_bench.py" \
      --device cuda "$@" | tail -1)
  fi
  [[ $line == \{* ]] || { echo "bench: $framework $*: no result" >&2; return 1; }
  echo "$line" | tee -a "$out/bench.jsonl"
}

do_bench() {  # do_bench WITH_PYTORCH
  local with_pytorch=$1 warmup=5 iterations=30 status=0
  ((quick)) && warmup=3 iterations=10
  # network, batch, rounds, flags: batches that keep an H200 busy without dwarfing the time
  # budget; each process spends more time starting (CUDA context, cuDNN's algorithm search)
  # than stepping, so only the ResNet-50 criterion gets a second round (frameworks alternate).
  local cases=("resnet50 128 2 --image-size 224" "vgg16 64 1 --image-size 224"
               "resnet18 128 1 --small-images --image-size 32")
  local spec network batch rounds flags round runs
  for spec in "${cases[@]}"; do
    read -r network batch rounds flags <<<"$spec"
    ((quick)) && rounds=1
    runs=()
    for ((round = 1; round <= rounds; ++round)); do
      # shellcheck disable=SC2086
      runs+=("$(bench_one imerge 150 --network "$network" --batch "$batch" $flags \
        --warmup "$warmup" --iterations "$iterations")") || status=1
      if ((with_pytorch)); then
        # shellcheck disable=SC2086
        runs+=("$(bench_one pytorch 150 --network "$network" --batch "$batch" $flags \
          --warmup "$warmup" --iterations "$iterations")") || status=1
      fi
    done
    if ((with_pytorch)); then
      printf '%s\n' "${runs[@]}" | grep '^{' |
        "$python" "$repo/bench/summarize_runs.py" --gpu --json "$out/bench_rows.jsonl" ||
        status=1
    fi
  done
  return "$status"
}

do_determinism() {
  local steps=8 epochs=2
  ((quick)) && steps=4 epochs=1
  local run
  for run in 1 2; do
    in_run_env "$build_dir/imerge-train" --device cuda --deterministic --dataset synthetic \
      --image-size 32 --model resnet18 --batch-size 64 --epochs "$epochs" --max-steps "$steps" \
      --seed 7 --workers 2 --log-json "$out/logs/determinism-$run.json" || return 1
  done
  "$python" - "$out/logs/determinism-1.json" "$out/logs/determinism-2.json" <<'PYTHON'
import json, math, sys
first, second = (json.load(open(path))["epochs"] for path in sys.argv[1:])
keys = ("train_loss", "train_accuracy", "test_loss", "test_accuracy")
pairs = [(e1["epoch"], k, e1.get(k), e2.get(k)) for e1, e2 in zip(first, second) for k in keys]
if len(first) != len(second) or not first:
    sys.exit("determinism: %d and %d epochs logged" % (len(first), len(second)))
for epoch, key, a, b in pairs:
    print("epoch %d %-15s %r  %r  %s" % (epoch, key, a, b, "same" if a == b else "DIFFERENT"))
if any(a is None or not math.isfinite(a) for _, _, a, _ in pairs):
    sys.exit("determinism: a missing or non-finite value")
if any(a != b for _, _, a, b in pairs):
    sys.exit("determinism: the two runs differ")
print("determinism: identical (%d values)" % len(pairs))
PYTHON
}

do_commbench() {
  local mpirun=$1 max_bytes=$((64 << 20))
  ((quick)) && max_bytes=$((16 << 20))
  in_run_env "$mpirun" --allow-run-as-root --oversubscribe --bind-to none -np 1 \
    "$build_dir/imerge-commbench" --backend device --max-bytes "$max_bytes" --repetitions 10 \
    --timeout 60 --out "$out/logs/commbench"
}

# ---- the report -----------------------------------------------------------------------------
write_report() {
  local finished
  finished=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  local commit
  commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo "unknown (no .git)")
  if ! git -C "$repo" diff --quiet HEAD 2>/dev/null && [[ $commit != unknown* ]]; then
    commit+=" with uncommitted changes"
  fi
  {
    echo "# imerge GPU check, $(date -u +%Y-%m-%d)"
    echo
    echo "| | |"
    echo "|---|---|"
    echo "| started / finished (UTC) | $started / $finished ($SECONDS s of a $budget s budget) |"
    echo "| mode | $( ((build_only)) && echo build only || { ((quick)) && echo quick || echo full; }) |"
    echo "| commit | $commit |"
    echo "| GPU | $gpu_name, $gpu_memory |"
    echo "| driver | $gpu_driver |"
    echo "| CUDA | $cuda_version; $cuda_libs |"
    echo "| build dependencies | $deps_source |"
    local os
    os=$(. /etc/os-release 2>/dev/null && echo "${PRETTY_NAME:-}")
    echo "| host | $(uname -n), $(nproc) CPUs, ${os:-unknown OS} |"
    echo "| PyTorch | $torch_version |"
    echo
    echo "## Stages"
    echo
    echo "| stage | result | seconds | note |"
    echo "|---|---|---|---|"
    local i
    for i in "${!stage_names[@]}"; do
      echo "| ${stage_names[$i]} | ${stage_status[$i]} | ${stage_seconds[$i]} | ${stage_notes[$i]} |"
    done
    echo
    if [[ -s $out/bench_rows.jsonl ]]; then
      echo "## Training step, imerge against PyTorch on the same GPU"
      echo
      echo "Synthetic batch resident on the GPU, SGD with momentum, softmax cross-entropy; median"
      echo "step time over rounds (each the median of its timed steps, device synchronised around"
      echo "each). Both with PyTorch's default float32 settings: cuDNN convolutions may use TF32,"
      echo "matrix products do not; cuDNN algorithm search per shape (PyTorch: cudnn.benchmark)."
      echo "Peak: the allocator's most live bytes since the start (PyTorch: max_memory_allocated)."
      echo "Ratios: images/s imerge/PyTorch (above 1: imerge faster); peak memory imerge/PyTorch"
      echo "(below 1: imerge smaller)."
      echo
      echo -n "| network | image size | batch | imerge images/s | PyTorch images/s "
      echo "| images/s ratio | imerge peak MiB | PyTorch peak MiB | peak memory ratio |"
      echo "|---|---|---|---|---|---|---|---|---|"
      "$python" - "$out/bench_rows.jsonl" <<'PYTHON'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    memory = "%.2fx" % r["peak_memory_ratio"] if r["peak_memory_ratio"] else "n/a"
    print("| %s%s | %d | %d | %.0f | %.0f | %.2fx | %.0f | %.0f | %s |" % (
        r["network"], " (small-image stem)" if r["small_images"] else "", r["image_size"],
        r["batch"], r["imerge_images_per_s"], r["pytorch_images_per_s"],
        r["images_per_s_ratio"], r["imerge_peak_bytes"] / 2**20,
        r["pytorch_peak_bytes"] / 2**20, memory))
PYTHON
      echo
    elif [[ -s $out/bench.jsonl ]]; then
      echo "## Training step (imerge alone: no PyTorch on the GPU here)"
      echo
      echo '```'
      cat "$out/bench.jsonl"
      echo '```'
      echo
    fi
    echo "ResNet-50 criterion (imerge images/s at least 0.9x PyTorch's): $ratio_note."
    echo
    echo "Determinism (two imerge-train runs, same seed, --deterministic): $determinism."
    if [[ -s $logs/commbench.log ]]; then
      echo
      echo "## 1-rank NCCL sweep (imerge-commbench --backend device)"
      echo
      echo '```'
      grep -E "workers|RMS|skipping|error" "$logs/commbench.log" | head -20
      echo '```'
    fi
    echo
    echo "Logs: logs/ (each stage's full output; logs/gpu-tests.log is the whole GPU suite)."
  } >"$out/report.md"
  # summary.json: the same as data (values through the environment, not the program text).
  local table="" i
  for i in "${!stage_names[@]}"; do
    table+=$(printf '%s\t%s\t%s\t%s' "${stage_names[$i]}" "${stage_status[$i]}" \
      "${stage_seconds[$i]}" "${stage_notes[$i]}")$'\n'
  done
  GC_OUT=$out GC_FAILED=$failed GC_STAGES=$table GC_STARTED=$started GC_GPU=$gpu_name \
    GC_GPU_MEMORY=$gpu_memory GC_DRIVER=$gpu_driver GC_CUDA=$cuda_version \
    GC_CUDA_LIBS=$cuda_libs GC_DEPS=$deps_source GC_PYTORCH=$torch_version \
    GC_RATIO=$ratio_note GC_DETERMINISM=$determinism "$python" - <<'PYTHON' || true
import json, os
env = os.environ
stages = [dict(zip(("name", "status", "seconds", "note"), line.split("\t")))
          for line in env["GC_STAGES"].splitlines() if line]
for stage in stages:
    stage["seconds"] = int(stage["seconds"])
rows_path = os.path.join(env["GC_OUT"], "bench_rows.jsonl")
rows = [json.loads(line) for line in open(rows_path)] if os.path.exists(rows_path) else []
summary = {"started": env["GC_STARTED"], "gpu": env["GC_GPU"], "gpu_memory": env["GC_GPU_MEMORY"],
           "driver": env["GC_DRIVER"], "cuda": env["GC_CUDA"], "cuda_libs": env["GC_CUDA_LIBS"],
           "deps": env["GC_DEPS"], "pytorch": env["GC_PYTORCH"], "failed": env["GC_FAILED"] == "1",
           "stages": stages, "bench": rows, "resnet50_criterion": env["GC_RATIO"],
           "determinism": env["GC_DETERMINISM"]}
with open(os.path.join(env["GC_OUT"], "summary.json"), "w") as out:
    json.dump(summary, out, indent=1)
PYTHON
}

finish() {
  write_report
  echo "gpu-check: report in $out/report.md"
  if ((failed)); then
    echo "gpu-check: FAILED stages: see the report" >&2
    exit 1
  fi
  exit 0
}

# ---- gpu ------------------------------------------------------------------------------------
smi=${NVIDIA_SMI:-nvidia-smi}
why_no_gpu=
if ! command -v "$smi" >/dev/null 2>&1; then
  why_no_gpu="$smi not found (no NVIDIA driver on this machine)"
elif ! smi_out=$(timeout 30 "$smi" --query-gpu=name,driver_version,memory.total \
    --format=csv,noheader 2>&1); then
  why_no_gpu="$smi failed: $(head -c 300 <<<"$smi_out")"
elif [[ -z ${smi_out// /} ]]; then
  why_no_gpu="$smi lists no GPU"
else
  IFS=, read -r gpu_name gpu_driver gpu_memory <<<"$(head -1 <<<"$smi_out")"
  gpu_name=${gpu_name# } gpu_driver=${gpu_driver# } gpu_memory=${gpu_memory# }
  echo "$smi_out" >"$logs/gpu.log"
  timeout 30 "$smi" >>"$logs/gpu.log" 2>&1
fi
if [[ -n $why_no_gpu ]]; then
  if ((build_only)); then
    record gpu skipped 0 "--build-only: $why_no_gpu"
  else
    echo "gpu-check.sh: no usable GPU: $why_no_gpu. This check needs an NVIDIA GPU and driver;" \
      "use --build-only to check the build alone." >&2
    record gpu FAILED 0 "no usable GPU: $why_no_gpu"
    write_report
    exit 2
  fi
else
  record gpu ok 0 "$gpu_name, driver $gpu_driver, $gpu_memory"
fi

# ---- deps -----------------------------------------------------------------------------------
if compgen -G "$deps_dir/*.deb" >/dev/null; then
  deps_prefix=$build_dir/deps
  mkdir -p "$build_dir"
  stage_note="$(ls "$deps_dir"/*.deb | wc -l) packages from ${deps_dir#"$repo"/} into ${deps_prefix#"$repo"/}"
  if stage deps 120 bash "$repo/scripts/gpu-deps-bundle.sh" --out "$deps_dir" \
      --unpack "$deps_prefix"; then
    # shellcheck disable=SC1091
    source "$deps_prefix/env.sh"
    deps_source="Debian 12 packages of ${deps_dir#"$repo"/}, unpacked into ${deps_prefix#"$repo"/}"
  fi
else
  record deps ok 0 "no ${deps_dir#"$repo"/}: the system's packages"
fi

# ---- cuda-libs: cuDNN and NCCL --------------------------------------------------------------
# CMakeLists.txt looks beside the CUDA toolkit. A machine whose toolkit lacks them (they are
# not part of it) may have PyTorch's wheels (nvidia-cudnn-cu13, nvidia-nccl-cu13: headers and
# libcudnn.so.9, libnccl.so.2, without the unversioned links find_library wants); point CMake
# at those.
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
cuda_version=$("$nvcc" --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\).*/nvcc \1/p')
cuda_version=${cuda_version:-"nvcc not found"}
toolkit_include=$(dirname "$(dirname "$(readlink -f "$nvcc")")")/include
wheel_dirs=()
found_from=
# PyTorch's nvidia.* packages: their folders (the namespace package nvidia has one per wheel).
nvidia_dirs=$("$python" -c "import nvidia; print('\n'.join(nvidia.__path__))" 2>/dev/null)
find_cuda_lib() {  # find_cuda_lib HEADER LIBRARY_FILE CACHE_PREFIX -> found_from
  local header=$1 file=$2 prefix=$3 found_header found_library
  found_from="not found"
  if [[ -e $toolkit_include/$header || -e /usr/local/cuda/include/$header ||
        -e /usr/include/$header ]]; then
    found_from=toolkit
    # CMakeLists.txt finds it; forget a wheel's path an earlier configure may have cached.
    cuda_cmake_args+=("-U${prefix}_LIBRARY" "-U${prefix}_INCLUDE_DIR")
    return
  fi
  [[ -n $nvidia_dirs ]] || return
  # The wheels' layout differs between CUDA versions (nvidia/cudnn/lib, nvidia/cu13/lib...).
  found_header=$(while IFS= read -r dir; do find "$dir" -maxdepth 4 -name "$header"; done \
    <<<"$nvidia_dirs" | head -1)
  found_library=$(while IFS= read -r dir; do find "$dir" -maxdepth 4 -name "$file"; done \
    <<<"$nvidia_dirs" | head -1)
  [[ -n $found_header && -n $found_library ]] || return
  # Cache variables set on the command line: CMakeLists.txt's find_library/find_path keep them.
  cuda_cmake_args+=("-D${prefix}_LIBRARY=$found_library"
                    "-D${prefix}_INCLUDE_DIR=$(dirname "$found_header")")
  wheel_dirs+=("$(dirname "$found_library")")
  found_from="PyTorch's wheel: $found_library"
}
find_cuda_lib cudnn.h libcudnn.so.9 CUDNN
cudnn_from=$found_from
find_cuda_lib nccl.h libnccl.so.2 NCCL
nccl_from=$found_from
cuda_libs="cuDNN: $cudnn_from; NCCL: $nccl_from"
if ((${#wheel_dirs[@]})); then
  # The executables find them through the build RPATH CMake gives every linked library's
  # folder; the libraries they load themselves (cuDNN's sub-libraries) through the variable.
  wheel_path=$(IFS=:; echo "${wheel_dirs[*]}")
  if ((${#GPU_DEPS_RUN_ENV[@]})); then
    GPU_DEPS_RUN_ENV[0]+=":$wheel_path"
  else
    GPU_DEPS_RUN_ENV=("LD_LIBRARY_PATH=$wheel_path${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
  fi
fi
if [[ $cudnn_from == "not found" || $nccl_from == "not found" ]]; then
  record cuda-libs FAILED 0 "$cuda_libs (neither beside nvcc nor in $python's nvidia wheels)"
else
  record cuda-libs ok 0 "$cuda_libs"
fi

# ---- configure, build -----------------------------------------------------------------------
stage configure 120 do_configure
configured=$?
built=1
if ((configured == 0)); then
  stage_note="targets imerge-train imerge-step-bench imerge-commbench $(gpu_test_targets | paste -sd' ')"
  stage build "$build_timeout" do_build
  built=$?
else
  record build FAILED 0 "not run: configure failed"
fi
((build_only)) && finish

# ---- GPU stages -----------------------------------------------------------------------------
if ((built != 0)); then
  for name in gpu-tests bench resnet50-ratio determinism commbench; do
    record "$name" FAILED 0 "not run: the build failed"
  done
  finish
fi

stage gpu-tests 150 do_gpu_tests

with_pytorch=0
if torch_version=$(timeout 60 "$python" -c "import torch, torchvision
assert torch.cuda.is_available(), 'torch.cuda.is_available() is False'
print('torch %s, torchvision %s, cuDNN %s' % (torch.__version__, torchvision.__version__,
      torch.backends.cudnn.version()))" 2>"$logs/torch-probe.log"); then
  with_pytorch=1
else
  torch_version="not usable: $(tail -1 "$logs/torch-probe.log")"
fi
stage_note=$( ((with_pytorch)) && echo "side by side with PyTorch" || echo "imerge alone: $torch_version")
stage bench 240 do_bench "$with_pytorch"

if ((!with_pytorch)); then
  record resnet50-ratio skipped 0 "no PyTorch on the GPU to compare with"
elif ratio=$("$python" -c "import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
r = [row for row in rows if row['network'] == 'resnet50']
print('%.3f %d' % (r[0]['images_per_s_ratio'], r[0]['batch'])) if r else sys.exit(1)" \
    "$out/bench_rows.jsonl" 2>/dev/null); then
  read -r value batch <<<"$ratio"
  if "$python" -c "import sys; sys.exit(0 if float(sys.argv[1]) >= 0.9 else 1)" "$value"; then
    ratio_note="met, ${value}x PyTorch at batch $batch"
    record resnet50-ratio ok 0 "${value}x PyTorch's images/s at batch $batch (needs 0.9x)"
  else
    ratio_note="NOT met, ${value}x PyTorch at batch $batch"
    record resnet50-ratio FAILED 0 "${value}x PyTorch's images/s at batch $batch (needs 0.9x)"
  fi
else
  record resnet50-ratio FAILED 0 "no ResNet-50 result from the bench stage"
fi

if stage determinism 120 do_determinism; then
  determinism="identical losses and accuracies ($(grep -c ' same$' "$logs/determinism.log") values)"
else
  last_line=$(grep -iE 'error|not expected|differ|non-finite|missing' "$logs/determinism.log" \
    2>/dev/null | tail -1)
  [[ -n $last_line ]] || last_line=$(grep -v '^\s*$' "$logs/determinism.log" 2>/dev/null | tail -1)
  determinism="FAILED ($last_line, logs/determinism.log)"
fi

mpirun_bin=
if [[ -n ${GPU_DEPS_ROOT:-} && -x $GPU_DEPS_ROOT/bin/mpirun.openmpi ]]; then
  mpirun_bin=$GPU_DEPS_ROOT/bin/mpirun.openmpi
elif command -v mpirun >/dev/null; then
  mpirun_bin=$(command -v mpirun)
fi
if [[ -z $mpirun_bin ]]; then
  record commbench skipped 0 "no mpirun here (nor in .gpu-deps/)"
else
  stage commbench 60 do_commbench "$mpirun_bin"
fi
finish
