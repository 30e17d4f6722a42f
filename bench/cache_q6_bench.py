#!/usr/bin/python3
"""TPC-H Q6 from the column cache (issue 20's first shapes: TEXT dates and an
arithmetic expression), against SQLite's own Q6 text and the uncached
gpu_query, on bench/lineitem.py's table, in the same run.

  bench/cache_q6_bench.py [--rows 6e6] [--reps 7] [--db DIR] [--csv FILE]
                          [--machine NAME] [--device cpu|auto]

Modes (each rep runs every mode once, in turn; medians and their ratio to
sqlite's median of the same run):
  sqlite     SQLite's own Q6 text
  gpu_query  gpu_query over the same text (parallel scan, no cache)
  cache      gpu_aggregate('lineitem', 'l_extendedprice * l_discount',
             '<Q6's filter, literals inlined>') answered from the cache
  load       gpu_cache('lineitem', the four columns), once per rep
The cache's answer must equal gpu_query's (value and type) and the
`gpu_sum` reference: the run exits 1 otherwise.  CSV: machine, rows, mode,
rep, ms, path.
"""
import argparse
import csv
import os
import sqlite3
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import lineitem  # noqa: E402

LIB = os.path.join(os.path.dirname(HERE), "libgpuagg")
Q6 = ("SELECT sum(l_extendedprice * l_discount) AS revenue FROM lineitem "
      "WHERE l_shipdate >= '1994-01-01' AND l_shipdate < '1995-01-01' "
      "AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24")
FILTER = ("l_shipdate >= '1994-01-01' AND l_shipdate < '1995-01-01' "
          "AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24")
COLS = "l_shipdate, l_discount, l_quantity, l_extendedprice"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", default="6e6")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--db", default="/tmp/gpuagg_query_bench")
    ap.add_argument("--csv", default=None)
    ap.add_argument("--machine", default=os.uname().nodename)
    ap.add_argument("--device", default="cpu")
    a = ap.parse_args()
    n = int(float(a.rows))
    os.makedirs(a.db, exist_ok=True)
    path = os.path.join(a.db, "lineitem_%d.db" % n)
    lineitem.make(path, n)
    con = sqlite3.connect(path, isolation_level=None)
    con.enable_load_extension(True)
    con.load_extension(LIB)
    con.execute("SELECT gpuagg_config('device', ?)", (a.device,))
    con.execute("CREATE VIRTUAL TABLE temp.q6 USING gpu_query('%s')" % Q6.replace("'", "''"))
    con.execute("SELECT count(*) FROM lineitem").fetchone()  # warm the page cache
    ref = con.execute(Q6.replace("sum(", "gpu_sum(")).fetchall()
    rows, ms = [], {m: [] for m in ("sqlite", "gpu_query", "cache", "load")}
    ok = True
    for rep in range(a.reps):
        for mode in ("sqlite", "gpu_query", "load", "cache"):
            t = time.perf_counter()
            if mode == "sqlite":
                got = con.execute(Q6).fetchall()
            elif mode == "gpu_query":
                got = con.execute("SELECT * FROM q6").fetchall()
            elif mode == "load":
                got = con.execute("SELECT gpu_cache('lineitem', ?)", (COLS,)).fetchall()
            else:
                got = con.execute("SELECT sum FROM gpu_aggregate('lineitem', "
                                  "'l_extendedprice * l_discount', ?)", (FILTER,)).fetchall()
            dt = (time.perf_counter() - t) * 1e3
            path_ = con.execute("SELECT json_extract(gpuagg_info(), '$.last_scan.path')"
                                ).fetchone()[0] if mode != "sqlite" else "sqlite"
            ms[mode].append(dt)
            rows.append((a.machine, n, mode, rep, "%.3f" % dt, path_))
            if mode in ("gpu_query", "cache"):
                same = repr(got) == repr(ref) and (mode != "cache" or path_ == "cache")
                if not same:
                    print("# CHECK FAILED: %s got %r (%s), want %r" % (mode, got, path_, ref))
                    ok = False
    base = statistics.median(ms["sqlite"])
    print("# %s, %d rows, Q6 (device %s); median ms, x = sqlite's median / the mode's"
          % (a.machine, n, a.device))
    for m in ("sqlite", "gpu_query", "cache", "load"):
        med = statistics.median(ms[m])
        print("%-10s %10.2f ms  x %8.2f" % (m, med, base / med))
    print("# check: gpu_query and the cache = the gpu_sum reference %r: %s" % (ref, ok))
    if a.csv:
        with open(a.csv, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["machine", "rows", "mode", "rep", "ms", "path"])
            w.writerows(rows)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
