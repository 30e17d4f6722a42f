#!/usr/bin/python3
"""Plot of the Star Schema Benchmark on 2 cores (issue 38).

  bench/plot_ssb.py [--scan CSV] [--cache CSV] [--out bench/plots/ssb.png]

Left: each query's speedup of gpu_query through the scan over SQLite's own
text (median of SQLite's wall times over gpu_query's, one run of
bench/ssb_bench.py --modes sqlite,gpu_query), against the issue's 1.5x.
Right: each query's host-cache time over DuckDB's (one run of
bench/ssb_bench.py --modes host_cache,duckdb), against 1 and the issue's
2x.  The CSVs have no header: machine, sf, query, mode, threads, rep, ms,
... (ssb_bench.py's rows).  Needs matplotlib (Debian: python3-matplotlib).
"""
import argparse
import csv
import os
import statistics
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
RES = os.path.join(HERE, "results")


def medians(path):
    ms = defaultdict(list)
    with open(path) as f:
        for row in csv.reader(f):
            if len(row) >= 7 and row[2].startswith("q"):
                ms[(row[2], row[3])].append(float(row[6]))
    return {k: statistics.median(v) for k, v in ms.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scan", default=os.path.join(RES, "ssb_scan_vm2_2026-12-06_s6.csv"))
    ap.add_argument("--cache", default=os.path.join(RES, "ssb_host_cache_vm2_2026-12-06_s6.csv"))
    ap.add_argument("--out", default=os.path.join(HERE, "plots", "ssb.png"))
    a = ap.parse_args()
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    s, c = medians(a.scan), medians(a.cache)
    qs = sorted({q for q, _ in s} | {q for q, _ in c})
    fig, (l, r) = plt.subplots(1, 2, figsize=(12, 4.2))
    x = range(len(qs))
    sp = [s[(q, "sqlite")] / s[(q, "gpu_query")] for q in qs]
    l.bar(x, sp, color="tab:orange")
    l.axhline(1.5, color="k", ls="--", lw=1, label="issue 38's goal, 1.5x")
    l.set_title("through the scan, 2 threads: SQLite's time / gpu_query's")
    rc = [c[(q, "host_cache")] / c[(q, "duckdb")] for q in qs]
    r.bar(x, rc, color="tab:green")
    r.axhline(1.0, color="k", lw=1, label="DuckDB's time")
    r.axhline(2.0, color="k", ls="--", lw=1, label="issue 38's bound, 2x")
    r.set_title("from the host cache: its time / DuckDB's (2 threads)")
    for ax in (l, r):
        ax.set_xticks(list(x))
        ax.set_xticklabels([q.upper() for q in qs], rotation=45)
        ax.legend(loc="upper right", fontsize=8)
    fig.suptitle("SSB SF 1 on 2 cores (medians of 5)")
    fig.tight_layout()
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    fig.savefig(a.out, dpi=90)
    print("wrote", a.out)


if __name__ == "__main__":
    main()
