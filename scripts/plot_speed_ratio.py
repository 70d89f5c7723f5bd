#!/usr/bin/python3
"""One strategy's speed over another's across a sweep, as a heat map per model (PNG and PDF)
and as Markdown tables on standard output.

  /usr/bin/python3 scripts/plot_speed_ratio.py sweep.csv --sweep startup_scale \
      --out docs/figures/imerge-over-mgwfbp [--numerator imerge] [--denominator mgwfbp]

sweep.csv is imerge-scale's table of a sweep (--startup-scale or --bandwidth-scale): columns
model, workers, strategy, source, seconds_per_iteration and the swept column. Only simulated
rows count. Per model the map's rows are the swept factor, its columns the worker counts, and
each cell is denominator time / numerator time (above 1: the numerator is faster). A cell
whose either strategy is missing is refused naming it, so a map never has silent holes.
Needs matplotlib (Debian's python3-matplotlib, which only /usr/bin/python3 imports).
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plot_common  # noqa: E402

SWEEPS = {"startup_scale": "startup cost x", "bandwidth_scale": "bandwidth x"}


def ratios(rows, sweep, numerator, denominator):
    """{model: {(factor, workers): ratio}} from the simulated rows."""
    seconds = {}
    for row in rows:
        if row["source"] == "simulated":
            seconds[(row["model"], row["strategy"], row[sweep], row["workers"])] = \
                row["seconds_per_iteration"]
    cells = {(m, f, w) for (m, _, f, w) in seconds}
    maps = {}
    for model, factor, workers in sorted(cells):
        pair = [(model, s, factor, workers) for s in (numerator, denominator)]
        missing = [key[1] for key in pair if key not in seconds]
        if missing:
            raise plot_common.TableError(
                f"{model} at {workers} workers, {sweep} {factor:g}: no simulated row of "
                f"{', '.join(missing)}")
        maps.setdefault(model, {})[(factor, workers)] = seconds[pair[1]] / seconds[pair[0]]
    if not maps:
        raise plot_common.TableError("no simulated rows")
    return maps


def markdown(model, cells, sweep):
    factors = sorted({f for f, _ in cells})
    workers = sorted({w for _, w in cells})
    lines = [f"{model}:", "", f"| {SWEEPS[sweep]} | " + " | ".join(f"{w} workers" for w in workers)
             + " |", "|---" * (len(workers) + 1) + "|"]
    for factor in factors:
        lines.append(f"| {factor:g} | " + " | ".join(f"{cells[(factor, w)]:.3f}" for w in workers)
                     + " |")
    return "\n".join(lines) + "\n"


def plot(pyplot, model, cells, sweep, title, prefix):
    factors = sorted({f for f, _ in cells})
    workers = sorted({w for _, w in cells})
    values = [[cells[(f, w)] for w in workers] for f in factors]
    figure, axes = pyplot.subplots(figsize=(4.8, 3.8))
    spread = max(abs(v - 1) for row in values for v in row) or 0.01
    image = axes.imshow(values, cmap="RdBu", vmin=1 - spread, vmax=1 + spread, origin="lower",
                        aspect="auto")
    axes.set_xticks(range(len(workers)), [str(w) for w in workers])
    axes.set_yticks(range(len(factors)), [f"{f:g}" for f in factors])
    axes.set_xlabel("workers")
    axes.set_ylabel(SWEEPS[sweep])
    for i, row in enumerate(values):
        for j, value in enumerate(row):
            axes.text(j, i, f"{value:.3f}", ha="center", va="center", fontsize=7)
    figure.colorbar(image, ax=axes, label="speed ratio")
    axes.set_title(f"{model}: {title}", fontsize=9)
    paths = plot_common.save(figure, f"{prefix}-{model}")
    pyplot.close(figure)
    return paths


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("table", help="imerge-scale's CSV or JSON of a sweep")
    parser.add_argument("--sweep", choices=sorted(SWEEPS), required=True)
    parser.add_argument("--numerator", default="imerge")
    parser.add_argument("--denominator", default="mgwfbp")
    parser.add_argument("--out", help="output prefix of the heat maps (none: tables only)")
    arguments = parser.parse_args()
    try:
        rows = plot_common.read_rows(arguments.table, ("model", "strategy", "source"),
                                     ("seconds_per_iteration", arguments.sweep),
                                     integer_columns=("workers",))
        maps = ratios(rows, arguments.sweep, arguments.numerator, arguments.denominator)
    except plot_common.TableError as error:
        plot_common.fail(f"{arguments.table}: {error}")
    title = f"{arguments.denominator} time / {arguments.numerator} time"
    pyplot = plot_common.import_pyplot() if arguments.out else None
    for model, cells in maps.items():
        print(markdown(model, cells, arguments.sweep))
        if pyplot:
            plot(pyplot, model, cells, arguments.sweep, title, arguments.out)


if __name__ == "__main__":
    main()
