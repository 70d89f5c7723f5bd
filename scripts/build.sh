#!/usr/bin/env bash
# Configures and builds one configuration of imerge with CMake and Ninja.
#   scripts/build.sh release   -> build/release   (optimised; the default)
#   scripts/build.sh asan      -> build/asan      (AddressSanitizer + UBSan, -O1 -g, no CUDA)
#   scripts/build.sh planning  -> build/planning  (the planning library and its tests alone:
#                                                  no MPI, CUDA, oneDNN or BLAS)
#   scripts/build.sh fuzz      -> build/fuzz      (the libFuzzer targets of fuzz/ alone, with
#                                                  clang, ASan and UBSan; scripts/run-fuzzers.sh)
set -euo pipefail
cd "$(dirname "$0")/.."

config=${1:-release}
targets=()  # all of the configuration's, unless it names some
jobs=${JOBS:-$(nproc)}
case "$config" in
  release) flags=(-DCMAKE_BUILD_TYPE=Release) ;;
  # Without CUDA: the sanitizers do not reach device code, and this is the build that proves
  # imerge still builds and passes its tests where nvcc is missing (no core/cuda/ at all; the
  # refusal of --device cuda is core/cuda_availability.cpp's).
  asan) flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DIMERGE_SANITIZE=ON -DIMERGE_BUILD_BENCH=OFF
               -DIMERGE_CUDA=OFF "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g") ;;
  planning) flags=(-DCMAKE_BUILD_TYPE=Release -DIMERGE_PLANNING_ONLY=ON) ;;
  # libFuzzer is clang's. OpenMP stays GCC's libgomp, the one OpenBLAS and oneDNN use, so a
  # process never holds two OpenMP runtimes.
  fuzz) flags=(-DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DIMERGE_FUZZ=ON
               -DIMERGE_CUDA=OFF -DIMERGE_BUILD_TESTS=OFF -DIMERGE_BUILD_BENCH=OFF
               -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g"
               -DOpenMP_C_FLAGS=-fopenmp=libgomp -DOpenMP_CXX_FLAGS=-fopenmp=libgomp
               -DOpenMP_C_LIB_NAMES=gomp -DOpenMP_CXX_LIB_NAMES=gomp
               "-DOpenMP_gomp_LIBRARY=$(gcc -print-file-name=libgomp.so)")
        targets=(--target fuzzers) ;;
  *) echo "build.sh: unknown configuration '$config' (release, asan, planning or fuzz)" >&2; exit 2 ;;
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
cmake --build "build/$config" -j "$jobs" "${targets[@]}"
