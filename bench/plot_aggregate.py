#!/usr/bin/python3
"""Plot of gpu_aggregate's speedup against threads (bench/RESULTS.md §8).

  bench/plot_aggregate.py [CSV ...] [--out bench/plots/aggregate_speedup.png]

Reads CSVs of bench/aggregate_bench.py (machine, rows, case, threads, rep,
ref_s, ga_s, ...; default: bench/results/aggregate_*.csv except the
crossover, before and sorted ones, and the CPU machine's loaded runs) and draws, per machine, the median ratio ref_s / ga_s (the
speedup over SQLite's own query in the same run) against threads, one line
per (rows, case), with the prediction written before the runs as dashes.
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

# bench/RESULTS.md §8, written before the runs: sum() at 1e8 rows on 16 cores,
# and 1e7 rows on the 2-core machine
PREDICTION = {
    "h200": ([1, 2, 4, 8, 16], [0.87, 1.5, 2.9, 5.2, 6.5]),
    "cpu": ([1, 2], [0.87, 1.35]),
}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("csv", nargs="*")
    p.add_argument("--out", default=os.path.join(HERE, "plots", "aggregate_speedup.png"))
    a = p.parse_args()
    # not by default: the crossover runs, and the runs that RESULTS §8 sets
    # beside another of the same cases (before the hash mode, the sorted-mode
    # control; the CPU machine's runs under other jobs' load, superseded by
    # aggregate_cpu_quiet.csv).  The rerun of the GROUP BY cases
    # (aggregate_h200_1e7_groups.csv, read last) replaces the same cases of
    # an earlier file: a line is one run's
    skip = ("crossover", "before", "sorted")
    loaded = ("aggregate_cpu.csv", "aggregate_cpu_sum.csv")
    files = a.csv or [f for f in sorted(glob.glob(os.path.join(HERE, "results", "aggregate_*.csv")))
                      if not any(k in os.path.basename(f) for k in skip)
                      and os.path.basename(f) not in loaded]
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("SKIP: plot_aggregate.py needs matplotlib")
        return 0
    files.sort(key=lambda f: "groups" in os.path.basename(f))  # reruns last
    data = defaultdict(lambda: defaultdict(lambda: ([], [])))
    owner = {}  # (machine, rows, case) -> the file its points come from
    for f in files:
        with open(f, newline="") as fh:
            for r in csv.DictReader(fh):
                key = (int(r["rows"]), r["case"])
                line = (r["machine"],) + key
                if owner.setdefault(line, f) != f:  # a later run of the line
                    if owner[line] != "replaced:" + f:
                        for k in [k for k in data[r["machine"]] if k[:2] == key]:
                            del data[r["machine"]][k]
                        owner[line] = "replaced:" + f
                refs, gas = data[r["machine"]][key + (int(r["threads"]),)]
                refs.append(float(r["ref_s"]))
                gas.append(float(r["ga_s"]))
    machines = sorted(data)
    if not machines:
        print("no data in %s" % files)
        return 1
    fig, axes = plt.subplots(1, len(machines), figsize=(6.5 * len(machines), 4.8), squeeze=False)
    for ax, m in zip(axes[0], machines):
        lines = defaultdict(list)
        for (rows, case, th), (refs, gas) in data[m].items():
            lines[(rows, case)].append((th, statistics.median(refs) / statistics.median(gas)))
        for (rows, case), pts in sorted(lines.items()):
            pts.sort()
            ax.plot([t for t, _ in pts], [v for _, v in pts], marker="o",
                    label="%s, %.0e rows" % (case, rows))
        if m in PREDICTION:
            xs, ys = PREDICTION[m]
            ax.plot(xs, ys, "k--", alpha=0.6, label="prediction (sum)")
        ax.axhline(1.0, color="grey", lw=0.8)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("threads")
        ax.set_ylabel("speedup: SQLite's query time / gpu_aggregate's")
        ax.set_title("gpu_aggregate vs SQLite, %s" % m)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    fig.savefig(a.out, dpi=110)
    print("wrote %s" % a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
