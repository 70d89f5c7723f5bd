#!/usr/bin/env bash
# Configures and builds one configuration of imerge with CMake and Ninja.
#   scripts/build.sh release   -> build/release   (optimised; the default)
#   scripts/build.sh asan      -> build/asan      (AddressSanitizer + UBSan, -O1 -g, no CUDA)
#   scripts/build.sh planning  -> build/planning  (the planning library and its tests alone:
#                                                  no MPI, CUDA, oneDNN or BLAS)
set -euo pipefail
cd "$(dirname "$0")/.."

config=${1:-release}
jobs=${JOBS:-$(nproc)}
case "$config" in
  release) flags=(-DCMAKE_BUILD_TYPE=Release) ;;
  # Without CUDA: the sanitizers do not reach device code, and this is the build that proves
  # imerge still builds and passes its tests where nvcc is missing (no core/cuda/ at all; the
  # refusal of --device cuda is core/cuda_availability.cpp's).
  asan) flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DIMERGE_SANITIZE=ON -DIMERGE_BUILD_BENCH=OFF
               -DIMERGE_CUDA=OFF "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g") ;;
  planning) flags=(-DCMAKE_BUILD_TYPE=Release -DIMERGE_PLANNING_ONLY=ON) ;;
  *) echo "build.sh: unknown configuration '$config' (release, asan or planning)" >&2; exit 2 ;;
esac

# ccache (scripts/install-deps.sh installs it) keeps every object it compiled, keyed by the
# preprocessed source and the flags, so a fresh clone (CI's) rebuilds only what changed. Paths
# are taken relative to the checkout (CCACHE_BASEDIR) and the compile folder is not part of the
# key (CCACHE_NOHASHDIR), so any clone's objects serve any other: no object's flags name the
# checkout (the tests find it through tests/support/source_tree.cpp alone).
if command -v ccache >/dev/null; then
  flags+=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache
          -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=true CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-20G}
fi

cmake -S . -B "build/$config" -G Ninja "${flags[@]}" >/dev/null
cmake --build "build/$config" -j "$jobs"
