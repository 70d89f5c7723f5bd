#!/usr/bin/env bash
# Fails on an #include that runs upward through the layers (docs/design.md, "Layout"): each
# library's sources may include their own layer and the layers below it, nothing else. The
# libraries' links in CMakeLists.txt follow the same table, so an upward include would also be
# an upward link; this script catches it before the linker has to.
#   scripts/check-layers.sh [ROOT]     (ROOT: the source tree, default: this repository)
# Prints each offending line as FILE:LINE: LAYER includes HEADER from LAYER, and exits 1 if any.
# tests/ and bench/ may include anything and are not checked.
set -euo pipefail
root=${1:-"$(dirname "$0")/.."}
cd "$root"

# The layers each layer builds on directly; the rest follows transitively.
declare -A below=(
  [base]=""
  [planning]="base"
  [core]="base"
  [autograd]="core"
  [layers]="autograd"
  [optim]="autograd"
  [io]="layers optim"
  [data]="core"
  [models]="layers"
  [comm]="core"
  [profiling]="planning layers"
  [runtime]="comm planning layers optim"
  [training]="models data runtime io"
  [apps]="training profiling"
)

# layer_of PATH: the layer a source file or header path belongs to ("" when none).
layer_of() {
  case "$1" in
    core/error.* | core/input_file.*) echo base ;;
    core/*) echo core ;;
    distributed/comm/*) echo comm ;;
    distributed/planning/*) echo planning ;;
    distributed/profiling/*) echo profiling ;;
    distributed/runtime/*) echo runtime ;;
    autograd/* | layers/* | optim/* | io/* | data/* | models/* | training/* | apps/*)
      echo "${1%%/*}" ;;
    *) echo "" ;;
  esac
}

# allowed LAYER: LAYER and everything below it, space-separated.
allowed() {
  local result=" $1 " pending=(${below[$1]}) next
  while ((${#pending[@]})); do
    next=${pending[0]}
    pending=("${pending[@]:1}")
    [[ $result == *" $next "* ]] && continue
    result+="$next "
    pending+=(${below[$next]})
  done
  echo "$result"
}

status=0
checked=0
while IFS= read -r file; do
  layer=$(layer_of "$file")
  if [[ -z $layer ]]; then
    echo "check-layers: $file is in no layer; add its folder to scripts/check-layers.sh" >&2
    status=1
    continue
  fi
  permitted=$(allowed "$layer")
  while IFS=: read -r line header; do
    target=$(layer_of "$header")
    [[ -z $target ]] && continue  # a system or third-party header
    if [[ $permitted != *" $target "* ]]; then
      echo "$file:$line: $layer includes $header from $target, a layer above or beside it" >&2
      status=1
    fi
  done < <(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$file" |
    sed 's/^\([0-9]*\):[^"]*"\([^"]*\)".*/\1:\2/' || true)
  checked=$((checked + 1))
done < <(for folder in core autograd layers optim io data models distributed training apps; do
  [[ -d $folder ]] && find "$folder" -type f \( -name '*.h' -o -name '*.cpp' -o -name '*.cu' \)
done | sort)

if ((status == 0)); then
  echo "check-layers: $checked files, every include within its layer or below"
fi
exit "$status"
