#!/usr/bin/env bash
# The README's first command: install what is missing, build, and train the small CNN on
# Fashion-MNIST for one epoch, printing loss, accuracy and images/s. Extra arguments go to
# imerge-train (try --help).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh release
exec build/release/imerge-train --epochs 1 "$@"
