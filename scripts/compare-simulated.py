#!/usr/bin/env python3
"""imerge-scale's simulated time per iteration against the measured one, row by row.

    scripts/compare-simulated.py SCALE.csv [--bound PERCENT] [--expect N]

SCALE.csv is imerge-scale's table (columns workers, strategy, source, seconds_per_iteration).
Every measured row with more than one worker is paired with the simulated row of the same
workers and strategy, and the pairs are printed. Exit 1, saying why, when:
  - a measured row has no simulated partner (it would go unchecked),
  - no pair was found at all (a check of nothing passes whatever the simulator does),
  - --expect N is given and the number of pairs is not N,
  - --bound is given and a simulated time lies further than PERCENT from the measured one.
Used by scripts/slow-network-agreement.sh and tests/apps/scale_matches_real_run.sh.
"""
import argparse
import csv
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("table")
    parser.add_argument("--bound", type=float, help="fail beyond this many percent")
    parser.add_argument("--expect", type=int, help="the number of pairs there must be")
    args = parser.parse_args()

    with open(args.table, newline="") as file:
        rows = list(csv.DictReader(file))
    missing = {"workers", "strategy", "source", "seconds_per_iteration"} - set(rows[0] if rows else {})
    if missing:
        sys.exit(f"compare-simulated: {args.table}: no rows with columns {', '.join(sorted(missing))}")

    def key(row):
        return (int(row["workers"]), row["strategy"])

    simulated = {key(r): float(r["seconds_per_iteration"]) for r in rows if r["source"] == "simulated"}
    measured = [r for r in rows if r["source"] == "measured" and int(r["workers"]) > 1]
    problems = []
    print(f"{'ranks':>5} {'strategy':<14} {'measured ms':>12} {'simulated ms':>13} {'difference':>10}")
    pairs = 0
    for row in measured:
        if key(row) not in simulated:
            problems.append(f"{row['strategy']} on {row['workers']} ranks was measured but not simulated")
            continue
        pairs += 1
        m, s = float(row["seconds_per_iteration"]), simulated[key(row)]
        difference = 100 * (s - m) / m
        print(f"{row['workers']:>5} {row['strategy']:<14} {1e3 * m:12.1f} {1e3 * s:13.1f} {difference:+9.1f}%")
        if args.bound is not None and abs(difference) > args.bound:
            problems.append(f"{row['strategy']} on {row['workers']} ranks is {difference:+.1f}%, "
                            f"outside the {args.bound:g}% bound")
    if pairs == 0:
        problems.append(f"{args.table} has no measured row of more than one worker with a simulated "
                        "partner: nothing was compared")
    elif args.expect is not None and pairs != args.expect:
        problems.append(f"{pairs} measured-simulated pairs, expected {args.expect}")
    if problems:
        sys.exit("compare-simulated: " + "; ".join(problems))
    print(f"compare-simulated: {pairs} pairs compared")


if __name__ == "__main__":
    main()
