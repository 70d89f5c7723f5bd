#!/usr/bin/env bash
# The README's first command: install what is missing, build, and train ResNet-20 on
# Fashion-MNIST (imerge-train's defaults: 3 epochs, SGD with momentum, cosine schedule),
# showing loss, accuracy, images/s and the time left, then the test accuracy. Extra arguments
# go to imerge-train (try --help).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh release
exec build/release/imerge-train --log-json build/imerge-train-metrics.json "$@"
