"""Reads the JSON lines of bench/compare_with_pytorch.sh --models (imerge-step-bench and
pytorch_step_bench.py under each PyTorch, several rounds, any order; one imerge-sgemm-peak line)
and prints one Markdown table: per workload, each framework's images/s (median over rounds of
each run's median step), imerge's speed against each PyTorch (its images/s over theirs: above 1,
imerge is faster), the peak resident memory of each process (getrusage, the same counter on
both sides), imerge's allocator peak of live tensors, and the fraction of the sgemm peak
imerge's step reaches (its FLOPs as 6 x forward multiply-accumulates x batch).

    summarize_models.py < runs.jsonl
"""
import json
import statistics
import sys


def main():
    lines = [json.loads(line) for line in sys.stdin if line.strip()]
    peaks = [line["gflops"] for line in lines if "gflops" in line and "framework" not in line]
    runs = [line for line in lines if "framework" in line]
    if not peaks or not runs:
        sys.exit("summarize_models.py: need one imerge-sgemm-peak line and step runs, got %d and %d"
                 % (len(peaks), len(runs)))
    sgemm = max(peaks)
    peers = sorted({run["framework"] for run in runs if run["framework"] != "imerge"})

    workloads = []
    for run in runs:
        key = (run["network"], run["image_size"], run["small_images"], run["batch"])
        if key not in workloads:
            workloads.append(key)

    header = ["workload", "imerge images/s"] + ["%s images/s" % p for p in peers]
    header += ["imerge vs %s" % p for p in peers] + ["imerge peak RSS MiB"]
    header += ["%s peak RSS MiB" % p for p in peers]
    header += ["imerge tensor peak MiB", "imerge GFLOP/s", "of sgemm %.0f GFLOP/s" % sgemm]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for network, size, small, batch in workloads:
        of = {}
        for run in runs:
            if (run["network"], run["image_size"], run["small_images"], run["batch"]) == \
                    (network, size, small, batch):
                of.setdefault(run["framework"], []).append(run)
        missing = [f for f in ["imerge"] + peers if f not in of]
        if missing:
            sys.exit("summarize_models.py: %s batch %d has no runs of %s"
                     % (network, batch, ", ".join(missing)))
        ms = {f: statistics.median(r["median_ms"] for r in rs) for f, rs in of.items()}
        rss = {f: statistics.median(r["peak_rss_bytes"] for r in rs) / 2**20 for f, rs in of.items()}
        mine = of["imerge"]
        gflops = mine[0]["step_gflop"] / (ms["imerge"] / 1000)
        label = "%s%s, %dx%d, batch %d" % (network, " small-image stem" if small else "", size,
                                            size, batch)
        cells = [label, "%.1f" % (batch * 1000 / ms["imerge"])]
        cells += ["%.1f" % (batch * 1000 / ms[p]) for p in peers]
        cells += ["%.2fx" % (ms[p] / ms["imerge"]) for p in peers]
        cells += ["%.0f" % rss["imerge"]] + ["%.0f" % rss[p] for p in peers]
        cells += ["%.0f" % (statistics.median(r["peak_bytes"] for r in mine) / 2**20),
                  "%.0f" % gflops, "%.0f%%" % (100 * gflops / sgemm)]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
