#!/usr/bin/env python3
"""One strategy against the fastest of the others, cell by cell, from imerge-scale's CSV.

A cell is (model, workers, startup_scale, bandwidth_scale, source); in each, the strategy's
seconds per iteration is divided into the fastest other strategy's (above 1: the strategy is
faster). Prints every cell where it gains more than --show, the worst cell, and exits 1 when a
cell is slower than --tolerance allows (issue 15's check: within 1% of the best, or faster).

  scripts/compare-with-best.py docs/data/imerge-overlap-paper.csv --strategy imerge-overlap
"""
import argparse
import csv
import sys
from collections import defaultdict


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", nargs="+", help="imerge-scale CSV files")
    parser.add_argument("--strategy", default="imerge-overlap")
    parser.add_argument("--tolerance", type=float, default=0.01,
                        help="how much slower than the best a cell may be (default 0.01: 1%%)")
    parser.add_argument("--show", type=float, default=0.03,
                        help="print the cells where the strategy gains more than this")
    args = parser.parse_args()

    cells = defaultdict(dict)
    for path in args.csv:
        with open(path, newline="") as file:
            for row in csv.DictReader(file):
                key = (path, row["model"], int(row["workers"]), row["startup_scale"],
                       row["bandwidth_scale"], row["source"])
                cells[key][row["strategy"]] = float(row["seconds_per_iteration"])

    ratios = []
    for key, times in sorted(cells.items()):
        if args.strategy not in times or len(times) < 2:
            continue
        best_other, best_name = min((t, s) for s, t in times.items() if s != args.strategy)
        ratios.append((best_other / times[args.strategy], key, best_name))
    if not ratios:
        sys.exit(f"compare-with-best: no cell holds '{args.strategy}' beside another strategy")

    print(f"{len(ratios)} cells; {args.strategy}'s speed over the fastest other strategy's:")
    for ratio, (path, model, workers, startup, bandwidth, source), other in ratios:
        if ratio > 1 + args.show:
            print(f"  {model:9s} {workers:3d} workers, startup x{startup}, bandwidth x{bandwidth}:"
                  f" {ratio:.3f} (over {other})")
    worst = min(ratios)
    wins = sum(1 for r, _, _ in ratios if r > 1 + 1e-3)
    ties = sum(1 for r, _, _ in ratios if abs(r - 1) <= 1e-3)
    _, (_, model, workers, startup, bandwidth, _), other = worst
    print(f"faster (>0.1%) in {wins}, tied (within 0.1%) in {ties}, slower in "
          f"{len(ratios) - wins - ties}; best gain {max(ratios)[0]:.3f}; worst {worst[0]:.4f} "
          f"({model}, {workers} workers, startup x{startup}, bandwidth x{bandwidth}, against "
          f"{other})")
    if worst[0] < 1 - args.tolerance:
        print(f"compare-with-best: {args.strategy} is more than {args.tolerance:.0%} slower than "
              f"{other} in that cell", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
