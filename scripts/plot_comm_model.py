#!/usr/bin/python3
"""The communication model figure: measured all-reduce times and both fits, log-log, PNG and PDF.

  /usr/bin/python3 scripts/plot_comm_model.py docs/data/commbench-2ranks-shm.json --out comm-model

Input: imerge-commbench's JSON (samples with min/median/max and the linear and piecewise fits
per backend and worker count), or a samples CSV (bytes,seconds and optionally workers,
min_seconds, max_seconds; points only, since the fits live in the JSON: refit a CSV with
`imerge-commbench --fit-only FILE.csv --out PREFIX` to get one). Writes PREFIX-BACKEND-Nw.png
and .pdf per backend and worker count: the medians with min-max bars, the line a + bM and the
piecewise model (flat below its first breakpoint, drawn with its jumps), each labelled with its
RMS relative error. Needs matplotlib (Debian's python3-matplotlib, which only /usr/bin/python3
imports).
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plot_common  # noqa: E402


def linear_seconds(fit, sizes):
    return [fit["alpha_seconds"] + fit["beta_seconds_per_byte"] * size for size in sizes]


def piecewise_pieces(fit, low, high):
    """The piecewise model as (sizes, seconds) runs, one per segment, so the plot keeps its jumps
    (comm_model.h: T = flat below the first start, intercept + slope * M in a segment)."""
    starts = [segment["start_bytes"] for segment in fit["segments"]]
    bounds = [low] + starts + [high]
    runs = []
    for index in range(len(bounds) - 1):
        begin, end = max(bounds[index], low), min(bounds[index + 1], high)
        if begin >= end:
            continue
        sizes = [begin * (end / begin) ** (step / 40) for step in range(41)]
        if index == 0:
            seconds = [fit["flat_seconds"]] * len(sizes)
        else:
            segment = fit["segments"][index - 1]
            seconds = [segment["intercept_seconds"] + segment["slope_seconds_per_byte"] * size
                       for size in sizes]
        runs.append((sizes, seconds))
    return runs


def read_json(path):
    """[(backend, workers, samples, fit or None)] from imerge-commbench's JSON."""
    try:
        with open(path) as file:
            document = json.load(file)
    except OSError as error:
        raise plot_common.TableError(f"{path}: cannot read ({error.strerror})") from None
    except json.JSONDecodeError as error:
        raise plot_common.TableError(f"{path}:{error.lineno}: not valid JSON ({error.msg})") from None
    if not isinstance(document, dict) or not isinstance(document.get("backends"), list):
        raise plot_common.TableError(f"{path}: no 'backends' list; is this imerge-commbench's JSON?")
    panels = []
    for index, backend in enumerate(document["backends"]):
        where = f"{path}: backends[{index}]"
        for key in ("backend", "samples", "fits"):
            if key not in backend:
                raise plot_common.TableError(f"{where}: no '{key}'")
        samples = plot_common.read_rows_from_records(
            [(f"{where}.samples[{i}]", s) for i, s in enumerate(backend["samples"])],
            (), ("bytes", "seconds"), integer_columns=("workers",),
            optional={"min_seconds": 0.0, "max_seconds": 0.0})
        fits = {fit.get("workers"): fit for fit in backend["fits"]}
        for workers in sorted({s["workers"] for s in samples}):
            fit = fits.get(workers)
            if fit is not None:
                for model, keys in (("linear", ("alpha_seconds", "beta_seconds_per_byte", "error")),
                                    ("piecewise", ("flat_seconds", "segments", "error"))):
                    missing = [key for key in keys if key not in fit.get(model, {})]
                    if missing:
                        raise plot_common.TableError(
                            f"{where}: the {model} fit for {workers} workers has no '{missing[0]}'")
            panels.append((backend["backend"], workers,
                           [s for s in samples if s["workers"] == workers], fit))
    return panels


def read_csv(path):
    samples = plot_common.read_rows(path, (), ("bytes", "seconds"),
                                    optional={"workers": 1, "min_seconds": 0.0, "max_seconds": 0.0})
    name = os.path.splitext(os.path.basename(path))[0]
    return [(name, workers, [s for s in samples if s["workers"] == workers], None)
            for workers in sorted({s["workers"] for s in samples})]


def plot_panel(pyplot, backend, workers, samples, fit, prefix):
    samples = sorted(samples, key=lambda s: s["bytes"])
    sizes = [s["bytes"] for s in samples]
    medians = [s["seconds"] * 1e6 for s in samples]
    figure, axes = pyplot.subplots(figsize=(6.5, 4.5))
    has_spread = all(s["max_seconds"] > 0 for s in samples)
    if has_spread:
        lower = [max(0.0, (s["seconds"] - s["min_seconds"]) * 1e6) for s in samples]
        upper = [max(0.0, (s["max_seconds"] - s["seconds"]) * 1e6) for s in samples]
        axes.errorbar(sizes, medians, yerr=[lower, upper], fmt="o", markersize=3, color="black",
                      ecolor="0.6", elinewidth=0.8, capsize=0, label="measured (median, min-max)")
    else:
        axes.plot(sizes, medians, "o", markersize=3, color="black", label="measured")
    if fit is not None:
        low, high = min(sizes), max(sizes)
        grid = [low * (high / low) ** (step / 200) for step in range(201)]
        linear = fit["linear"]
        axes.plot(grid, [t * 1e6 for t in linear_seconds(linear, grid)], color="tab:blue",
                  label=f"linear a + bM (error {100 * linear['error']:.1f}%)")
        piecewise = fit["piecewise"]
        for index, (run_sizes, run_seconds) in enumerate(piecewise_pieces(piecewise, low, high)):
            axes.plot(run_sizes, [max(t, 1e-9) * 1e6 for t in run_seconds], color="tab:red",
                      label=f"piecewise (error {100 * piecewise['error']:.1f}%)" if index == 0
                      else None)
        for segment in piecewise["segments"]:
            axes.axvline(segment["start_bytes"], color="tab:red", linewidth=0.5, linestyle=":")
    axes.set_xscale("log", base=2)
    axes.set_yscale("log")
    axes.set_xlabel("message size (bytes)")
    axes.set_ylabel("all-reduce time (us)")
    axes.set_title(f"all-reduce, {backend}, {workers} workers")
    axes.grid(True, which="both", linewidth=0.3)
    axes.legend(fontsize="small")
    paths = plot_common.save(figure, f"{prefix}-{backend}-{workers}w")
    pyplot.close(figure)
    return paths


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("input", help="imerge-commbench's JSON (points and fits) or a samples CSV")
    parser.add_argument("--out", default="comm-model", help="output prefix (default: %(default)s)")
    arguments = parser.parse_args()
    pyplot = plot_common.import_pyplot()
    try:
        panels = read_json(arguments.input) if arguments.input.endswith(".json") else read_csv(
            arguments.input)
    except plot_common.TableError as error:
        plot_common.fail(str(error))
    if not panels:
        plot_common.fail(f"{arguments.input}: no samples")
    for backend, workers, samples, fit in panels:
        if fit is None:
            print(f"{backend}, {workers} workers: no fits in the input; plotting the points only")
        plot_panel(pyplot, backend, workers, samples, fit, arguments.out)


if __name__ == "__main__":
    main()
