#!/usr/bin/env bash
# Installs the Debian packages imerge builds and runs with (docs/design.md section 5), skipping the
# network entirely when they are all present. Run as root on Debian 12.
# PyTorch is among them: the model-zoo tests compare logits with torchvision's, and the
# benchmarks run it side by side.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  ccache              # scripts/build.sh: objects kept between clones and builds
  libopenblas-dev libopenblas0-openmp libdnnl-dev ocl-icd-opencl-dev
  libopenmpi-dev openmpi-bin
  libstb-dev libcli11-dev nlohmann-json3-dev zlib1g-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  dataset-fashion-mnist
  python3-torch python3-torchvision
  python3-matplotlib  # scripts/plot_*.py (only /usr/bin/python3 imports it)
  iproute2            # scripts/slow-network.sh: ip netns, veth, tc tbf
  clang libclang-rt-14-dev  # scripts/build.sh fuzz: libFuzzer and clang's sanitizer runtimes
)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  if [[ $(id -u) -ne 0 ]]; then
    echo "install-deps: run as root (or with sudo) to install packages" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all ${#packages[@]} packages present"
fi
