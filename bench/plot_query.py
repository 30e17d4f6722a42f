#!/usr/bin/python3
"""Plot of gpu_query's analytics benchmark (issue 19).

  bench/plot_query.py [CSV ...] [--out bench/plots/query.png]

Reads CSVs of bench/query_bench.py (machine, rows, query, mode, threads,
rep, ms, ...; default: bench/results/query_*.csv) and draws one panel per
CSV and (machine, rows), so that every ratio is of one run: per query (q1, q6, d1, d2, d3), the median milliseconds of
each mode (SQLite's own text, gpu_query with its threads, gpu_query with
one thread, DuckDB) on a log scale, each bar labelled with its ratio to
SQLite's median of the same run (x = SQLite / mode: above 1 is faster).
Needs matplotlib (Debian: apt-get install python3-matplotlib).
"""
import argparse
import csv
import glob
import os
import statistics
import sys
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
MODES = ["sqlite", "gpu_query", "gpu_query_t1", "duckdb", "cache"]
LABEL = {"sqlite": "SQLite's own text", "gpu_query": "gpu_query, %s threads",
         "gpu_query_t1": "gpu_query, 1 thread", "duckdb": "DuckDB, %s threads",
         "cache": "gpu_query from gpu_cache, %s threads"}
COLOR = {"sqlite": "tab:blue", "gpu_query": "tab:orange", "gpu_query_t1": "tab:green",
         "duckdb": "tab:purple", "cache": "tab:red"}
QUERIES = ["q1", "q6", "d1", "d2", "d3"]
TICKS = {"q1": "Q1\n4 groups", "q6": "Q6\nno group", "d1": "d1 mode,\nyear",
         "d2": "d2 top 10,\n3 keys", "d3": "d3 ratio,\nHAVING"}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("csv", nargs="*")
    p.add_argument("--out", default=os.path.join(HERE, "plots", "query.png"))
    a = p.parse_args()
    files = a.csv or sorted(glob.glob(os.path.join(HERE, "results", "query_*.csv")))
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("SKIP: no matplotlib")
        return 0
    data = defaultdict(list)  # (file, machine, rows, query, mode) -> ms
    threads = {}              # (file, machine, rows, mode) -> the mode's threads
    for f in files:
        with open(f) as fh:
            for r in csv.DictReader(fh):
                key = (os.path.basename(f), r["machine"], int(r["rows"]))
                data[key + (r["query"], r["mode"])].append(float(r["ms"]))
                threads[key + (r["mode"],)] = r["threads"]
    panels = sorted({(f, m, n) for (f, m, n, _, _) in data})
    if not panels:
        print("no data in", files)
        return 1
    fig, axes = plt.subplots(1, len(panels), figsize=(7.5 * len(panels), 4.8), squeeze=False)
    for ax, (fname, machine, rows) in zip(axes[0], panels):
        present = [md for md in MODES
                   if any((fname, machine, rows, q, md) in data for q in QUERIES)]
        width = 0.8 / max(1, len(present))
        for j, mode in enumerate(present):
            xs, ys, labels = [], [], []
            for i, q in enumerate(QUERIES):
                v = data.get((fname, machine, rows, q, mode))
                if not v:
                    continue
                base = data.get((fname, machine, rows, q, "sqlite"))
                m = statistics.median(v)
                xs.append(i + (j - (len(present) - 1) / 2) * width)
                ys.append(m)
                labels.append("%.2gx" % (statistics.median(base) / m) if base else "")
            if not xs:
                continue
            label = LABEL[mode] % threads.get((fname, machine, rows, mode)) if "%" in LABEL[mode] \
                else LABEL[mode]
            bars = ax.bar(xs, ys, width, label=label, color=COLOR[mode])
            for b, t in zip(bars, labels):
                ax.text(b.get_x() + b.get_width() / 2, b.get_height() * 1.1, t, ha="center",
                        fontsize=7, rotation=90)
        ax.set_yscale("log")
        ax.set_xticks(range(len(QUERIES)))
        ax.set_xticklabels([TICKS[q] for q in QUERIES], fontsize=8)
        ax.set_ylabel("ms (median, log scale)")
        ax.set_title("%s, %.0e lineitem rows (%s)\nlabel: SQLite's median / the mode's"
                     % (machine, rows, fname), fontsize=9)
        ax.margins(y=0.25)
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=4)
    fig.tight_layout()
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    fig.savefig(a.out, dpi=110)
    print("wrote", a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
