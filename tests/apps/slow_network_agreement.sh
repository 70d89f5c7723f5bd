#!/usr/bin/env bash
# slow_network_agreement.sh BUILD_DIR WORKDIR: the simulator against real 2-rank runs of every
# strategy over scripts/slow-network.sh's 1 Gbit/s links (scripts/slow-network-agreement.sh
# with a loose 35% bound; the issue's target is 15%, and the real runs here share 2 cores with
# the kernel's TCP stack). Skipped (exit 77), saying why, where network namespaces cannot be
# made: that needs root and iproute2.
set -euo pipefail
build=$1
workdir=$2
source "$(dirname "$0")/skip_without_netns.sh"
rm -rf "$workdir"
AGREEMENT_OUT=$workdir AGREEMENT_BOUND=35 BUILD=$build \
  "$(dirname "$0")/../../scripts/slow-network-agreement.sh" 1gbit 2
