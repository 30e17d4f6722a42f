#!/usr/bin/python3
"""Plot of gpu_cache's benchmark (bench/RESULTS.md §10).

  bench/plot_cache.py [CSV ...] [--out bench/plots/cache.png]

Reads CSVs of bench/cache_bench.py (machine, rows, query, mode, threads,
rep, seconds, ...; default: bench/results/cache_*.csv) and draws one panel
per (machine, rows): per query (a, b, load), the median seconds of each mode
(SQLite's own loop, the uncached parallel gpu_aggregate, the host cache, the
GPU cache, DuckDB's sum and fsum) on a log scale, each bar labelled with its
ratio to SQLite's `sum()` query of the same run (load: to the parallel
scan).  Needs matplotlib (Debian: apt-get install python3-matplotlib).
"""
import argparse
import csv
import glob
import os
import statistics
import sys
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
MODES = ["sqlite", "parallel", "cpu", "gpu", "duckdb_sum", "duckdb_fsum"]
LABEL = {"sqlite": "SQLite sum()", "parallel": "gpu_aggregate, uncached",
         "cpu": "host cache", "gpu": "GPU cache", "duckdb_sum": "DuckDB sum",
         "duckdb_fsum": "DuckDB fsum"}
COLOR = {"sqlite": "tab:blue", "parallel": "tab:orange", "cpu": "tab:green", "gpu": "tab:red",
         "duckdb_sum": "tab:purple", "duckdb_fsum": "tab:brown"}
QUERIES = ["a", "b", "load"]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("csv", nargs="*")
    p.add_argument("--out", default=os.path.join(HERE, "plots", "cache.png"))
    a = p.parse_args()
    files = a.csv or sorted(glob.glob(os.path.join(HERE, "results", "cache_*.csv")))
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("SKIP: no matplotlib")
        return 0
    data = defaultdict(list)  # (machine, rows, query, mode) -> seconds
    for f in files:
        with open(f) as fh:
            for r in csv.DictReader(fh):
                data[(r["machine"], int(r["rows"]), r["query"], r["mode"])].append(
                    float(r["seconds"]))
    panels = sorted({(m, n) for (m, n, _, _) in data})
    if not panels:
        print("no data in", files)
        return 1
    fig, axes = plt.subplots(1, len(panels), figsize=(6.5 * len(panels), 4.8), squeeze=False)
    for ax, (machine, rows) in zip(axes[0], panels):
        width = 0.13
        for j, mode in enumerate(MODES):
            xs, ys, labels = [], [], []
            for i, q in enumerate(QUERIES):
                v = data.get((machine, rows, q, mode))
                if not v:
                    continue
                base = data.get((machine, rows, q, "sqlite" if q != "load" else "parallel"))
                m = statistics.median(v)
                xs.append(i + (j - 2.5) * width)
                ys.append(m)
                labels.append("%.0fx" % (statistics.median(base) / m) if base else "")
            if not xs:
                continue
            bars = ax.bar(xs, ys, width, label=LABEL[mode], color=COLOR[mode])
            for b, t in zip(bars, labels):
                ax.text(b.get_x() + b.get_width() / 2, b.get_height() * 1.1, t, ha="center",
                        fontsize=6, rotation=90)
        ax.set_yscale("log")
        ax.set_xticks(range(len(QUERIES)))
        ax.set_xticklabels(["(a) sum(x)", "(b) y > 500,\nGROUP BY k", "load (c)"])
        ax.set_ylabel("seconds (median, log scale)")
        ax.set_title("%s, %.0e rows" % (machine, rows), fontsize=9)
        ax.legend(fontsize=7)
    fig.tight_layout()
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    fig.savefig(a.out, dpi=110)
    print("wrote", a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
