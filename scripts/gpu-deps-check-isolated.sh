#!/usr/bin/env bash
# scripts/gpu-deps-check-isolated.sh [--fake-gpu] [GPU-CHECK ARGS...]: runs scripts/gpu-check.sh
# on this Debian machine as if it were the GPU machine that lacks our build dependencies, to
# test .gpu-deps/ (scripts/gpu-deps-bundle.sh) before device time is spent on it.
#
# In a private mount namespace (root, nothing changes outside it) an overlay over /usr hides
# every file of the bundled packages as installed here, and of the packages the bundle leaves
# out as never loaded (other OpenBLAS builds, Open MPI's network transports, -dev packages),
# and /etc/openmpi; what stays is what the GPU image is assumed to have (glibc, the GCC
# runtime and compiler, zlib1g, the CUDA toolkit under /usr/local/cuda). gpu-check.sh then
# unpacks .gpu-deps/, configures, builds and, with --fake-gpu (an nvidia-smi that names an
# H200), runs its GPU stages too: with no GPU they fail, but they show the programs start, find
# their libraries and that mpirun works relocated. Afterwards the built programs' libraries
# are listed (logs/isolated-ldd.log): each must come from the bundle, the CUDA toolkit or the
# assumed base system. --cuda-libs-from-wheels also hides cuDNN and NCCL from the toolkit and
# offers them as PyTorch's wheels do (gpu-check.sh's fallback for a toolkit without them).
#   sudo scripts/gpu-deps-check-isolated.sh --fake-gpu --out build/gpu-check-isolated \
#     --budget 3600 --build-timeout 3000       (a 2-core machine builds for several minutes)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
((EUID == 0)) || { echo "gpu-deps-check-isolated.sh: needs root (mount namespace, overlay)" >&2; exit 2; }
compgen -G ".gpu-deps/*.deb" >/dev/null ||
  { echo "gpu-deps-check-isolated.sh: no .gpu-deps/: run scripts/gpu-deps-bundle.sh first" >&2; exit 2; }
fake_gpu=0 wheel_cuda_libs=0
while [[ ${1:-} == --fake-gpu || ${1:-} == --cuda-libs-from-wheels ]]; do
  [[ $1 == --fake-gpu ]] && fake_gpu=1
  [[ $1 == --cuda-libs-from-wheels ]] && wheel_cuda_libs=1
  shift
done
args=("$@")
out=build/gpu-check
for ((i = 0; i < ${#args[@]}; ++i)); do [[ ${args[$i]} == --out ]] && out=${args[$((i + 1))]}; done
[[ $out == /* ]] || out=$repo/$out

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/upper" "$work/work"

# The bundle's packages, and those it leaves out as never loaded, plus every other build of
# OpenBLAS and Open MPI's extras: none of them is on the GPU image.
hidden_packages=$(for deb in .gpu-deps/*.deb; do dpkg-deb --showformat='${Package}\n' -W "$deb"; done)
hidden_packages+="
libopenblas-dev libopenblas-pthread-dev libopenblas0-pthread libopenblas0 libblas3 liblapack3
libhwloc-dev libevent-dev libpmix-dev libibverbs-dev libhwloc-plugins libfabric1 libucx0
libibverbs1 ibverbs-providers libpsm2-2 libpsm-infinipath1 librdmacm1 libnl-3-200
libnl-route-3-200 libnl-3-dev libnl-route-3-dev libnuma-dev libltdl-dev libevent-2.1-7
libevent-extra-2.1-7 libevent-openssl-2.1-7 libbenchmark-dev libbenchmark1debian googletest
libopenblas-openmp-dev libcoarrays-openmpi-dev libcoarrays-dev"
for package in $hidden_packages; do
  dpkg-query -L "$package" 2>/dev/null || true
done | sed -E 's#^/(lib|lib64|bin|sbin)/#/usr/\1/#' | grep '^/usr/' | sort -u >"$work/candidates"
: >"$work/hidden"
while IFS= read -r path; do
  [[ -d $path && ! -L $path ]] && continue
  [[ -e $path || -L $path ]] || continue
  echo "$path" >>"$work/hidden"
done <"$work/candidates"
# update-alternatives links (cblas.h, libblas.so.3, mpirun...) to a hidden file.
find /usr/bin /usr/include /usr/lib/x86_64-linux-gnu -maxdepth 3 -type l \
  -lname '/etc/alternatives/*' 2>/dev/null | while IFS= read -r link; do
  target=$(readlink -f "$link" || true)
  if grep -qxF "$target" "$work/hidden" || [[ ! -e $target ]]; then echo "$link"; fi
done >>"$work/hidden"
# --cuda-libs-from-wheels: cuDNN and NCCL hidden from the CUDA toolkit and offered, as
# PyTorch's wheels do, in a python package nvidia (hard links: the overlay hides paths, not
# files; no unversioned .so links, as in the wheels).
site=$work/site
if ((wheel_cuda_libs)); then
  for lib in cudnn nccl; do
    mkdir -p "$site/nvidia/$lib/include" "$site/nvidia/$lib/lib"
    for file in "$(readlink -f /usr/local/cuda/include)"/"$lib"*.h \
        "$(readlink -f /usr/local/cuda/lib64)"/lib"$lib"*.so*; do
      [[ -e $file ]] || continue
      echo "$file" >>"$work/hidden"
      [[ -L $file ]] && continue
      case $file in
        *.h) ln "$file" "$site/nvidia/$lib/include/" ;;
        *) ln "$file" "$site/nvidia/$lib/lib/" ;;
      esac
    done
  done
fi
while IFS= read -r path; do
  mkdir -p "$work/upper$(dirname "${path#/usr}")"
  mknod "$work/upper${path#/usr}" c 0 0
done <"$work/hidden"
echo "gpu-deps-check-isolated.sh: hiding $(wc -l <"$work/hidden") files under /usr and /etc/openmpi"

fake_smi=$work/nvidia-smi
cat >"$fake_smi" <<'SMI'
#!/bin/sh
# A stand-in for nvidia-smi: names a GPU that is not there.
case "$*" in
  *--query-gpu*) echo "NVIDIA H200 (fake: gpu-deps-check-isolated.sh), 580.00, 143771 MiB" ;;
  *) echo "fake nvidia-smi: no GPU behind it" ;;
esac
SMI
chmod +x "$fake_smi"
smi_env=()
((fake_gpu)) && smi_env=(NVIDIA_SMI="$fake_smi")
((wheel_cuda_libs)) && smi_env+=(PYTHONPATH="$site")

build_dir=build/gpu-release
for ((i = 0; i < ${#args[@]}; ++i)); do
  [[ ${args[$i]} == --build-dir ]] && build_dir=${args[$((i + 1))]}
done
[[ $build_dir == /* ]] || build_dir=$repo/$build_dir

# gpu-check.sh, then, still inside the namespace, which library each built program loads from
# where: every one must come from the bundle, the CUDA toolkit or the assumed base system.
status=0
unshare -m --propagation private bash -c '
  work=$1 build_dir=$2 ldd_log=$3
  shift 3
  mount -t overlay overlay -o "lowerdir=/usr,upperdir=$work/upper,workdir=$work/work" /usr || exit 2
  if [[ -d /etc/openmpi ]]; then mount -t tmpfs none /etc/openmpi || exit 2; fi
  "$@"
  status=$?
  GPU_DEPS_RUN_ENV=()
  if [[ -e $build_dir/deps/env.sh ]]; then source "$build_dir/deps/env.sh"; fi
  for program in "$build_dir"/imerge-train "$build_dir"/imerge-commbench \
      "$build_dir"/bench/imerge-step-bench "$build_dir"/tests/cuda_ops_test; do
    [[ -x $program ]] || continue
    echo "== $program"
    env "${GPU_DEPS_RUN_ENV[@]}" ldd "$program"
  done >"$ldd_log" 2>&1
  exit $status
' _ "$work" "$build_dir" "$work/ldd.log" env "${smi_env[@]}" CCACHE_DISABLE=1 \
  scripts/gpu-check.sh "${args[@]}" || status=$?

cp "$work/ldd.log" "$out/logs/isolated-ldd.log" 2>/dev/null || true
base='linux-vdso|ld-linux|/libc\.so|/libm\.so|/libdl\.so|/librt\.so|/libpthread\.so|/libstdc\+\+|/libgcc_s|/libgomp|/libz\.so|/libudev'
echo "gpu-deps-check-isolated.sh: libraries loaded from outside the bundle, the CUDA toolkit" \
  "and the base list (logs/isolated-ldd.log):"
grep -E '=>|not found' "$work/ldd.log" | grep -vF "$build_dir/deps/" | grep -v /usr/local/cuda |
  grep -vF "$site/nvidia/" |
  grep -Ev "$base" || echo "  none"
exit "$status"
