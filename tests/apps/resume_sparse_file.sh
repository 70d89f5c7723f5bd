#!/usr/bin/env bash
# resume_sparse_file.sh REFUSED_WITHIN_LIMITS IMERGE_TRAIN FILE: a 6 GiB file of zeros that
# takes no disk (truncate makes it sparse), given to --resume as a dataset archive might be by
# mistake. It must be refused as "not an imerge checkpoint" from its first bytes.
set -eu
limits=$1 train=$2 file=$3
rm -f "$file"
truncate -s 6G "$file"
trap 'rm -f "$file"' EXIT
# 300 MB of peak memory is what shows the file was not read; 5 s only catches a hang (under load
# the start-up before the refusal alone took 1.6 s on this 2-core VM).
"$limits" 5 300 "$(basename "$file") is not an imerge checkpoint" \
  "$train" --resume "$file" --dataset synthetic --image-size 16
