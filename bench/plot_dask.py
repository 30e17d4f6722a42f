#!/usr/bin/python3
"""Plot of gpuagg.dask's benchmark (issue 21).

  bench/plot_dask.py [CSV] [--out bench/plots/dask.png]

Reads a CSV of bench/dask_bench.py (default: the newest
bench/results/dask_*.csv) and draws, per query, the median milliseconds of
each mode (SQLite's own text over the merged database, gpu_query over it,
the shards in turn in one process, gpuagg.dask on a local cluster) on a log
scale, each bar labelled with its ratio to SQLite's median of the same run;
the merge's share of the wall time is written over the two many-file modes.
Needs matplotlib (Debian: apt-get install python3-matplotlib).
"""
import argparse
import csv
import glob
import os
import statistics
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
MODES = ["sqlite", "merged", "sequential", "sequential_t1", "dask"]
LABEL = {"sqlite": "SQLite's own text, merged file", "merged": "gpu_query, merged file",
         "sequential": "16 files in turn, one process", "sequential_t1": "the same, one thread",
         "dask": "gpuagg.dask, local cluster"}
COLOR = {"sqlite": "tab:blue", "merged": "tab:orange", "sequential": "tab:green", "sequential_t1": "tab:olive",
         "dask": "tab:purple"}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("csv", nargs="?")
    p.add_argument("--out", default=os.path.join(HERE, "plots", "dask.png"))
    a = p.parse_args()
    f = a.csv or sorted(glob.glob(os.path.join(HERE, "results", "dask_*.csv")))[-1]
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("SKIP: no matplotlib")
        return 0
    ms, merge = defaultdict(list), defaultdict(list)
    queries, info = [], {}
    with open(f) as fh:
        for r in csv.DictReader(fh):
            if r["query"] not in queries:
                queries.append(r["query"])
            ms[r["query"], r["mode"]].append(float(r["ms"]))
            if r["merge_ms"]:
                merge[r["query"], r["mode"]].append(float(r["merge_ms"]))
            info = (r["machine"], r["files"], r["rows"])
    fig, ax = plt.subplots(figsize=(10, 5))
    modes = [m for m in MODES if any(ms[q, m] for q in queries)]
    width = 0.8 / len(modes)
    for j, mode in enumerate(modes):
        xs, ys = [], []
        for i, q in enumerate(queries):
            if ms[q, mode]:
                xs.append(i + (j - (len(modes) - 1) / 2) * width)
                ys.append(statistics.median(ms[q, mode]))
        bars = ax.bar(xs, ys, width, label=LABEL[mode], color=COLOR[mode])
        for b, q in zip(bars, [q for q in queries if ms[q, mode]]):
            base = statistics.median(ms[q, "sqlite"]) if ms[q, "sqlite"] else None
            text = "" if mode == "sqlite" or not base else "%.1fx" % (base / b.get_height())
            if merge[q, mode]:
                text += "\nmerge %.1f%%" % (100 * statistics.median(merge[q, mode]) / b.get_height())
            ax.annotate(text, (b.get_x() + b.get_width() / 2, b.get_height()), ha="center",
                        va="bottom", fontsize=7)
    ax.set_yscale("log")
    ax.set_xticks(range(len(queries)))
    ax.set_xticklabels(queries)
    ax.set_ylabel("median ms (log)")
    ax.set_title("gpuagg.dask, %s: %s files, %s rows in all (ratios: SQLite / mode, same run)" % info)
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(a.out, dpi=110)
    print("wrote", a.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
