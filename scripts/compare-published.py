#!/usr/bin/env python3
"""imerge-scale's simulated throughput against a preset's published measurements, cell by cell.

    scripts/compare-published.py SCALE.csv [--bound B] [--order-at 8,16,32] [--expect N]

SCALE.csv is imerge-scale's table of a preset with published figures (--preset
ddl-resnet50-10gbe). Every row of source "published" is paired with the unscaled simulated row
of the same model, workers and strategy; the table of pairs and their log ratios is printed
(the per-cell error docs/scalability.md quotes). Exit 1, saying why, when:
  - a published row has no simulated partner, or no pair exists at all,
  - --expect N is given and the number of pairs is not N,
  - the mean |log(simulated / published)| exceeds --bound (default 0.2),
  - at a worker count of --order-at the strategies rank differently by simulated throughput
    than by published throughput.
"""
import argparse
import csv
import math
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("table")
    parser.add_argument("--bound", type=float, default=0.2,
                        help="the largest mean |log(simulated/published)| that passes")
    parser.add_argument("--order-at", default="8,16,32",
                        help="worker counts where the strategies' order must agree")
    parser.add_argument("--expect", type=int, help="the number of pairs there must be")
    args = parser.parse_args()

    with open(args.table, newline="") as file:
        rows = list(csv.DictReader(file))
    needed = {"model", "workers", "strategy", "source", "images_per_second", "startup_scale",
              "bandwidth_scale"}
    missing = needed - set(rows[0] if rows else {})
    if missing:
        sys.exit(f"compare-published: {args.table}: no rows with columns {', '.join(sorted(missing))}")

    def key(row):
        return (row["model"], int(row["workers"]), row["strategy"])

    def unscaled(row):
        return float(row["startup_scale"]) == 1 and float(row["bandwidth_scale"]) == 1

    simulated = {key(r): float(r["images_per_second"])
                 for r in rows if r["source"] == "simulated" and unscaled(r)}
    published = {key(r): float(r["images_per_second"]) for r in rows if r["source"] == "published"}
    problems = []
    errors = []
    print(f"{'model':<10} {'workers':>7} {'strategy':<9} {'published':>10} {'simulated':>10} "
          f"{'log ratio':>9}")
    for cell, measured in sorted(published.items()):
        if cell not in simulated:
            problems.append(f"{cell[0]} {cell[2]} at {cell[1]} workers was published but not simulated")
            continue
        error = math.log(simulated[cell] / measured)
        errors.append(abs(error))
        print(f"{cell[0]:<10} {cell[1]:>7} {cell[2]:<9} {measured:10.0f} {simulated[cell]:10.0f} "
              f"{error:+9.3f}")
    if not errors:
        sys.exit(f"compare-published: {args.table} has no published row with a simulated partner: "
                 "nothing was compared")
    if args.expect is not None and len(errors) != args.expect:
        problems.append(f"{len(errors)} published-simulated pairs, expected {args.expect}")
    mean = sum(errors) / len(errors)
    print(f"mean |log(simulated/published)| over {len(errors)} cells: {mean:.3f} "
          f"(bound {args.bound:g})")
    if mean > args.bound:
        problems.append(f"the mean |log(simulated/published)| is {mean:.3f}, above {args.bound:g}")

    for workers in (int(w) for w in args.order_at.split(",") if w):
        for model in sorted({cell[0] for cell in published}):
            cells = [c for c in published if c[0] == model and c[1] == workers and c in simulated]
            if len(cells) < 2:
                problems.append(f"{model} at {workers} workers: fewer than two strategies to order")
                continue
            by_published = [c[2] for c in sorted(cells, key=lambda c: published[c])]
            by_simulated = [c[2] for c in sorted(cells, key=lambda c: simulated[c])]
            print(f"{model} at {workers} workers, slowest first: published {' < '.join(by_published)}"
                  f", simulated {' < '.join(by_simulated)}")
            if by_published != by_simulated:
                problems.append(f"{model} at {workers} workers: the simulation orders the strategies "
                                f"{' < '.join(by_simulated)}, the measurements "
                                f"{' < '.join(by_published)}")
    if problems:
        sys.exit("compare-published: " + "; ".join(problems))
    print(f"compare-published: {len(errors)} cells compared, order agrees")


if __name__ == "__main__":
    main()
