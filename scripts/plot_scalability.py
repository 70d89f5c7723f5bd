#!/usr/bin/python3
"""Scalability figures from imerge-scale's table (CSV or JSON), as PNG and PDF.

  /usr/bin/python3 scripts/plot_scalability.py scale.csv --out docs/figures/scale

The table has the columns model, workers, strategy, source (measured|simulated),
seconds_per_iteration, images_per_second, communication_seconds, speedup, scaling_efficiency
(others are ignored); a missing column is refused naming it. Per model it writes:
  PREFIX-MODEL-throughput   images/s bars per strategy at each worker count, with the
                            communication time per iteration as lines on a second axis
                            (the figure of SINGA's benchmark page)
  PREFIX-MODEL-fusion       the fusion schemes side by side: fusion (static threshold), mgwfbp
                            (adaptive, linear model), imerge (adaptive, piecewise model)
  PREFIX-MODEL-speedup      speedup against workers on log-log axes with the linear line
Where a (model, workers, strategy) has both a measured and a simulated row, --source chooses:
"prefer-measured" (default: measured where it exists), "measured" or "simulated" only.
Simulated bars are hatched, so a figure never passes a simulation off as a measurement.
Needs matplotlib (Debian's python3-matplotlib, which only /usr/bin/python3 imports).
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plot_common  # noqa: E402

TEXT_COLUMNS = ("model", "strategy", "source")
NUMBER_COLUMNS = ("seconds_per_iteration", "images_per_second", "communication_seconds",
                  "speedup", "scaling_efficiency")
STRATEGY_ORDER = ("default", "wfbp", "fusion", "priority", "mgwfbp", "imerge", "ddp")
FUSION_SCHEMES = ("fusion", "mgwfbp", "imerge")
SOURCES = ("measured", "simulated")


def read_table(path):
    rows = plot_common.read_rows(path, TEXT_COLUMNS, NUMBER_COLUMNS, integer_columns=("workers",))
    for row in rows:
        # A preset's published figures are measurements too (of another cluster, by others).
        if row["source"] == "published":
            row["source"] = "measured"
        if row["source"] not in SOURCES:
            raise plot_common.TableError(
                f"{row['where']}: column 'source' is '{row['source']}'; it must be measured, "
                "published or simulated")
        if row["workers"] < 1:
            raise plot_common.TableError(f"{row['where']}: column 'workers' must be at least 1")
    return rows


def choose(rows, source):
    """One row per (model, workers, strategy), by the --source rule."""
    chosen = {}
    for row in rows:
        if source != "prefer-measured" and row["source"] != source:
            continue
        key = (row["model"], row["workers"], row["strategy"])
        if key not in chosen or row["source"] == "measured":
            chosen[key] = row
    return chosen


def ordered_strategies(names):
    known = [name for name in STRATEGY_ORDER if name in names]
    return known + sorted(set(names) - set(known))


def grouped_bars(pyplot, chosen, model, strategies, workers, title):
    """Bars of images/s per strategy at each worker count; returns the figure and its axes."""
    figure, axes = pyplot.subplots(figsize=(max(6.0, 1.3 * len(workers) * len(strategies) / 3), 4.2))
    width = 0.8 / len(strategies)
    colors = pyplot.rcParams["axes.prop_cycle"].by_key()["color"]
    for index, strategy in enumerate(strategies):
        labelled = False
        for position, count in enumerate(workers):
            row = chosen.get((model, count, strategy))
            if row is None:
                continue
            simulated = row["source"] == "simulated"
            axes.bar(position + (index - (len(strategies) - 1) / 2) * width,
                     row["images_per_second"], width, color=colors[index % len(colors)],
                     hatch="//" if simulated else None, edgecolor="white" if simulated else None,
                     label=None if labelled else strategy)
            labelled = True
    axes.set_xticks(range(len(workers)), [str(count) for count in workers])
    axes.set_xlabel("workers")
    axes.set_ylabel("throughput (images/s)")
    axes.set_title(title)
    return figure, axes


def source_note(chosen, model, simulated_look="hatched"):
    sources = {row["source"] for (m, _, _), row in chosen.items() if m == model}
    if sources == {"measured"}:
        return "all measured"
    if sources == {"simulated"}:
        return "all simulated"
    return f"{simulated_look}: simulated"


def dedupe_legend(axes, extra=()):
    handles, labels = axes.get_legend_handles_labels()
    for other in extra:
        more_handles, more_labels = other.get_legend_handles_labels()
        handles += more_handles
        labels += more_labels
    unique = {}
    for handle, label in zip(handles, labels):
        if label and not label.startswith("_") and label not in unique:
            unique[label] = handle
    axes.legend(unique.values(), unique.keys(), fontsize="small", loc="upper left")


def plot_throughput(pyplot, chosen, model, prefix):
    strategies = ordered_strategies({s for (m, _, s) in chosen if m == model})
    workers = sorted({w for (m, w, _) in chosen if m == model})
    figure, axes = grouped_bars(pyplot, chosen, model, strategies, workers,
                                f"{model}: throughput and communication ({source_note(chosen, model)})")
    second = axes.twinx()
    for strategy in strategies:
        points = [(position, chosen[(model, count, strategy)]["communication_seconds"] * 1e3)
                  for position, count in enumerate(workers) if (model, count, strategy) in chosen]
        if points:
            second.plot([p for p, _ in points], [c for _, c in points], marker="o",
                        linewidth=1.2, label=f"{strategy} communication")
    second.set_ylabel("communication per iteration (ms)")
    second.set_ylim(bottom=0)
    dedupe_legend(axes, [second])
    paths = plot_common.save(figure, f"{prefix}-{model}-throughput")
    pyplot.close(figure)
    return paths


def plot_fusion(pyplot, chosen, model, prefix):
    present = {s for (m, _, s) in chosen if m == model}
    strategies = [name for name in FUSION_SCHEMES if name in present]
    if not strategies:
        print(f"{model}: no fusion, mgwfbp or imerge rows; no fusion comparison")
        return []
    workers = sorted({w for (m, w, s) in chosen if m == model and s in strategies})
    figure, axes = grouped_bars(
        pyplot, chosen, model, strategies, workers,
        f"{model}: fusion schemes ({source_note(chosen, model)})")
    dedupe_legend(axes)
    paths = plot_common.save(figure, f"{prefix}-{model}-fusion")
    pyplot.close(figure)
    return paths


def plot_speedup(pyplot, chosen, model, prefix):
    strategies = ordered_strategies({s for (m, _, s) in chosen if m == model})
    workers = sorted({w for (m, w, _) in chosen if m == model})
    figure, axes = pyplot.subplots(figsize=(5.5, 4.2))
    for strategy in strategies:
        points = [(count, chosen[(model, count, strategy)]["speedup"]) for count in workers
                  if (model, count, strategy) in chosen
                  and chosen[(model, count, strategy)]["speedup"] > 0]
        if points:
            line, = axes.plot([w for w, _ in points], [s for _, s in points], label=strategy)
            for count, speedup in points:
                simulated = chosen[(model, count, strategy)]["source"] == "simulated"
                axes.plot([count], [speedup], "o", color=line.get_color(),
                          markerfacecolor="white" if simulated else line.get_color())
    low, high = min(workers), max(workers)
    axes.plot([low, high], [low, high], "k--", linewidth=1, label="linear")
    axes.set_xscale("log", base=2)
    axes.set_yscale("log", base=2)
    axes.set_xlabel("workers")
    axes.set_ylabel("speedup against one worker")
    for axis in (axes.xaxis, axes.yaxis):
        axis.set_major_formatter(matplotlib_ticker().FuncFormatter(lambda value, _: f"{value:g}"))
    axes.set_title(f"{model}: speedup ({source_note(chosen, model, 'hollow')})")
    axes.legend(fontsize="small")
    axes.grid(True, which="both", linewidth=0.3)
    paths = plot_common.save(figure, f"{prefix}-{model}-speedup")
    pyplot.close(figure)
    return paths


def matplotlib_ticker():
    import matplotlib.ticker

    return matplotlib.ticker


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("table", help="imerge-scale's CSV or JSON")
    parser.add_argument("--out", default="scalability", help="output prefix (default: %(default)s)")
    parser.add_argument("--model", action="append", help="only this model (repeatable)")
    parser.add_argument("--source", choices=("prefer-measured", "measured", "simulated"),
                        default="prefer-measured")
    arguments = parser.parse_args()
    pyplot = plot_common.import_pyplot()
    try:
        rows = read_table(arguments.table)
    except plot_common.TableError as error:
        plot_common.fail(str(error))
    chosen = choose(rows, arguments.source)
    models = sorted({m for (m, _, _) in chosen})
    if arguments.model:
        unknown = set(arguments.model) - set(models)
        if unknown:
            plot_common.fail(f"--model {', '.join(sorted(unknown))}: not in {arguments.table} "
                             f"(it has {', '.join(models) or 'no rows of this source'})")
        models = arguments.model
    if not models:
        plot_common.fail(f"{arguments.table}: no {arguments.source} rows")
    for model in models:
        plot_throughput(pyplot, chosen, model, arguments.out)
        plot_fusion(pyplot, chosen, model, arguments.out)
        plot_speedup(pyplot, chosen, model, arguments.out)


if __name__ == "__main__":
    main()
