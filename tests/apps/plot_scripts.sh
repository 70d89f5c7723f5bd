#!/usr/bin/env bash
# The plot scripts on hand-written tables: every PNG and PDF is written, and a table without a
# required column is refused naming the column.
#   plot_scripts.sh PROJECT_DIR OUT_DIR
# Exits 77 (CTest: skipped) when /usr/bin/python3 cannot import matplotlib.
set -euo pipefail

project=$1
out=$2
python=/usr/bin/python3
fixtures=$project/tests/apps/fixtures

if ! "$python" -c 'import matplotlib' 2>/dev/null; then
  echo "skipped: $python cannot import matplotlib (apt-get install -y python3-matplotlib)"
  exit 77
fi
rm -rf "$out"
mkdir -p "$out"

"$python" "$project/scripts/plot_scalability.py" "$fixtures/scale_small.csv" --out "$out/scale"
"$python" "$project/scripts/plot_comm_model.py" "$fixtures/commbench_small.csv" --out "$out/comm"
"$python" "$project/scripts/plot_comm_model.py" "$project/docs/data/commbench-2ranks-shm.json" \
  --out "$out/measured"
for figure in scale-resnet18-throughput scale-resnet18-fusion scale-resnet18-speedup \
  comm-commbench_small-2w measured-mpi-2w; do
  for extension in png pdf; do
    if [[ ! -s $out/$figure.$extension ]]; then
      echo "FAILED: $out/$figure.$extension was not written"
      exit 1
    fi
  done
done

# Refusals: the agreed imerge-scale header without speedup.
cut -d, -f1-7,9 "$fixtures/scale_small.csv" >"$out/no_speedup.csv"
if message=$("$python" "$project/scripts/plot_scalability.py" "$out/no_speedup.csv" \
  --out "$out/bad" 2>&1); then
  echo "FAILED: a table without 'speedup' was accepted"
  exit 1
fi
if [[ $message != *"no 'speedup' column"* ]]; then
  echo "FAILED: the refusal does not name the column: $message"
  exit 1
fi
echo "all figures written; the missing column was named: $message"
