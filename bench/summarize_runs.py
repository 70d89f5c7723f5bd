"""Reads the JSON lines of imerge-step-bench and pytorch_step_bench.py runs of one network and
prints one Markdown table row: the median over rounds of each framework's median step time and
their ratio (PyTorch time / imerge time: above 1 means imerge is faster)."""
import json
import statistics
import sys

runs = [json.loads(line) for line in sys.stdin if line.strip()]
ours = [run for run in runs if run["framework"] == "imerge"]
theirs = [run for run in runs if run["framework"] != "imerge"]
if not ours or not theirs:
    sys.exit("summarize_runs.py: need runs of both frameworks, got %d and %d" % (len(ours), len(theirs)))
mine = statistics.median(run["median_ms"] for run in ours)
peer = statistics.median(run["median_ms"] for run in theirs)
first = ours[0]
print("| %s | %d | %d | %.1f | %.1f | %.2fx | %.0f MiB |" % (
    first["network"], first["batch"], first["threads"], mine, peer, peer / mine,
    first["peak_bytes"] / 2**20))
