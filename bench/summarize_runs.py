"""Reads the JSON lines of imerge-step-bench and pytorch_step_bench.py runs of one network (one
line per run, in any order, several rounds) and prints one Markdown table row.

Each framework's step time is the median over rounds of its runs' median step times, so a
noisy round moves neither much.

    summarize_runs.py            CPU row (bench/compare_with_pytorch.sh):
        | network | batch | threads | imerge ms/step | PyTorch ms/step | speed vs PyTorch |
        imerge peak tensor memory |
        speed vs PyTorch = PyTorch time / imerge time (above 1: imerge is faster).
    summarize_runs.py --gpu [--json FILE]   GPU row (scripts/gpu-check.sh):
        | network | image size | batch | imerge images/s | PyTorch images/s | images/s ratio |
        imerge peak MiB | PyTorch peak MiB | peak memory ratio |
        images/s ratio = imerge / PyTorch (above 1: imerge is faster); peak memory ratio =
        imerge / PyTorch (below 1: imerge needs less). --json appends the row's numbers to FILE
        as one JSON line.
"""
import argparse
import json
import statistics
import sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpu", action="store_true", help="the GPU row (images/s, both peaks)")
    parser.add_argument("--json", help="--gpu: append the row as a JSON line to this file")
    args = parser.parse_args()

    runs = [json.loads(line) for line in sys.stdin if line.strip()]
    ours = [run for run in runs if run["framework"] == "imerge"]
    theirs = [run for run in runs if run["framework"] != "imerge"]
    if not ours or not theirs:
        sys.exit("summarize_runs.py: need runs of both frameworks, got %d and %d"
                 % (len(ours), len(theirs)))
    first = ours[0]
    for run in runs:
        if run["network"] != first["network"] or run["batch"] != first["batch"]:
            sys.exit("summarize_runs.py: runs of different networks or batches: %s/%d and %s/%d"
                     % (first["network"], first["batch"], run["network"], run["batch"]))
    mine = statistics.median(run["median_ms"] for run in ours)
    peer = statistics.median(run["median_ms"] for run in theirs)

    if not args.gpu:
        print("| %s | %d | %d | %.1f | %.1f | %.2fx | %.0f MiB |" % (
            first["network"], first["batch"], first["threads"], mine, peer, peer / mine,
            first["peak_bytes"] / 2**20))
        return

    my_peak = statistics.median(run["peak_bytes"] for run in ours)
    peer_peak = statistics.median(run["peak_bytes"] for run in theirs)
    row = {"network": first["network"], "image_size": first["image_size"],
           "small_images": first["small_images"], "batch": first["batch"],
           "rounds": len(ours), "imerge_ms": mine, "pytorch_ms": peer,
           "imerge_images_per_s": first["batch"] * 1000 / mine,
           "pytorch_images_per_s": first["batch"] * 1000 / peer,
           "images_per_s_ratio": peer / mine,
           "imerge_peak_bytes": my_peak, "pytorch_peak_bytes": peer_peak,
           "peak_memory_ratio": my_peak / peer_peak if peer_peak else None,
           "pytorch": theirs[0]["framework"]}
    label = first["network"] + (" (small-image stem)" if first["small_images"] else "")
    memory_ratio = "%.2fx" % row["peak_memory_ratio"] if peer_peak else "n/a"
    print("| %s | %d | %d | %.0f | %.0f | %.2fx | %.0f | %.0f | %s |" % (
        label, first["image_size"], first["batch"], row["imerge_images_per_s"],
        row["pytorch_images_per_s"], row["images_per_s_ratio"], my_peak / 2**20,
        peer_peak / 2**20, memory_ratio))
    if args.json:
        with open(args.json, "a") as out:
            out.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
