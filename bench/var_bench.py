#!/usr/bin/python3
"""The exact standard deviation per l_shipmode (issue 39) against SQLite's
textbook formula and DuckDB's stddev_samp, on bench/lineitem.py's rows, in
one run, modes interleaved rep by rep.

  bench/var_bench.py [--rows 6e6] [--reps 5] [--db DIR] [--csv FILE]
                     [--duckdb-threads 2] [--duckdb-dir bench/duckdb]

Modes (7 groups, SELECT l_shipmode, <stddev of l_extendedprice> ... GROUP BY
l_shipmode ORDER BY l_shipmode):
  gpu_stddev   gpuagg's exact, correctly rounded gpu_stddev, SQLite's scan
  gpu_query    the same text through gpu_query: its parallel path (Σx² in
               the workers' group states), threads 2
  host_cache   the same gpu_query text on a second connection that holds
               gpu_cache's host entry of l_shipmode, l_extendedprice
               (cache_host.c rule 20), threads 2
  naive        SQLite's own sqrt((sum(x*x) - sum(x)*sum(x)/count(x)) /
               (count(x) - 1)), the rewrite users write today
  duckdb       DuckDB's stddev_samp, its native in-memory table, --duckdb-threads
Each rep runs every mode once; the summary is the median wall and CPU time
(this process's getrusage for the SQLite modes, /proc/<pid>/stat of node for
DuckDB) and each mode's largest relative difference from gpu_stddev (the
exact answer).  The database file is bench/lineitem.py's (made when absent,
opened read-only).
"""

import argparse
import csv
import math
import os
import resource
import sqlite3
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import lineitem  # noqa: E402
import query_bench  # noqa: E402

LIB = os.environ.get("GPUAGG_LIB") or os.path.join(os.path.dirname(HERE), "libgpuagg")
EXACT = ("SELECT l_shipmode, gpu_stddev(l_extendedprice) AS sd FROM lineitem "
         "GROUP BY l_shipmode ORDER BY l_shipmode")
NAIVE = ("SELECT l_shipmode, sqrt((sum(l_extendedprice * l_extendedprice) - sum(l_extendedprice) * "
         "sum(l_extendedprice) / count(l_extendedprice)) / (count(l_extendedprice) - 1)) AS sd "
         "FROM lineitem GROUP BY l_shipmode ORDER BY l_shipmode")
DUCK = ("SELECT l_shipmode, stddev_samp(l_extendedprice) AS sd FROM lineitem "
        "GROUP BY l_shipmode ORDER BY l_shipmode")


def cpu_s():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=float, default=6e6)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--db", default="/tmp/gpuagg_query_bench")
    ap.add_argument("--csv")
    ap.add_argument("--duckdb-threads", type=int, default=2)
    ap.add_argument("--duckdb-dir", default=os.path.join(HERE, "duckdb"))
    a = ap.parse_args()
    n = int(a.rows)
    os.makedirs(a.db, exist_ok=True)
    path = os.path.join(a.db, "lineitem_%d.db" % n)
    if not os.path.exists(path):
        lineitem.make(path, n)
    con = sqlite3.connect("file:%s?mode=ro" % path, uri=True, isolation_level=None)
    con.enable_load_extension(True)
    con.load_extension(LIB)
    con.execute("SELECT count(*), sum(length(l_shipmode)) FROM lineitem").fetchone()  # warm
    con.execute("SELECT gpuagg_config('threads', 2)")
    con.execute("CREATE VIRTUAL TABLE temp.q USING gpu_query('%s')" % EXACT.replace("'", "''"))
    cc = sqlite3.connect("file:%s?mode=ro" % path, uri=True, isolation_level=None)
    cc.enable_load_extension(True)
    cc.load_extension(LIB)
    cc.execute("SELECT gpuagg_config('threads', 2)")
    cc.execute("SELECT gpu_cache('lineitem', 'l_shipmode, l_extendedprice')").fetchall()
    cc.execute("CREATE VIRTUAL TABLE temp.q USING gpu_query('%s')" % EXACT.replace("'", "''"))
    duck = query_bench.DuckDB(a, n)
    if duck.why:
        print("# duckdb skipped: %s" % duck.why)
        duck = None
    modes = ["gpu_stddev", "gpu_query", "host_cache", "naive"] + (["duckdb"] if duck else [])
    paths = {}
    times = {m: [] for m in modes}
    cpus = {m: [] for m in modes}
    answers = {}
    for rep in range(a.reps):
        order = modes[rep % len(modes):] + modes[:rep % len(modes)]
        for m in order:
            if m == "duckdb":
                c0 = query_bench.proc_cpu_ms(duck.p.pid)
                t0 = time.perf_counter()
                _, rows = duck.query(DUCK)
                w = time.perf_counter() - t0
                c = (query_bench.proc_cpu_ms(duck.p.pid) - c0) / 1000.0
            else:
                sql = {"gpu_stddev": EXACT, "gpu_query": "SELECT * FROM temp.q",
                       "host_cache": "SELECT * FROM temp.q", "naive": NAIVE}[m]
                cn = cc if m == "host_cache" else con
                c0, t0 = cpu_s(), time.perf_counter()
                rows = cn.execute(sql).fetchall()
                w, c = time.perf_counter() - t0, cpu_s() - c0
                if m in ("gpu_query", "host_cache"):
                    paths[m] = query_bench.scan_info(cn)
            times[m].append(w)
            cpus[m].append(c)
            answers[m] = [tuple(r) for r in rows]
    exact = answers["gpu_stddev"]
    out = []
    print("# %d rows, %d reps, 7 groups; paths: %s" % (
        n, a.reps, "; ".join("%s %s (%s)" % (m, p[0], (p[2] or "")[:60]) for m, p in paths.items())))
    print("%-12s %10s %10s %12s %s" % ("mode", "wall_ms", "cpu_ms", "max_rel_err", "vs gpu_stddev (cpu)"))
    base = statistics.median(cpus["gpu_stddev"])
    for m in modes:
        errs = [abs(x[1] - y[1]) / abs(y[1]) if y[1] else abs(x[1])
                for x, y in zip(answers[m], exact)]
        same = answers[m] == exact
        row = (m, statistics.median(times[m]) * 1e3, statistics.median(cpus[m]) * 1e3,
               0.0 if same else max(errs), statistics.median(cpus[m]) / base)
        out.append(row)
        print("%-12s %10.1f %10.1f %12.3g %.2fx%s" % (row + (" (bit-identical)" if same else "",)))
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["mode", "rows", "reps", "wall_ms_median", "cpu_ms_median", "max_rel_err_vs_exact",
                        "cpu_ratio_vs_gpu_stddev", "path"])
            for r in out:
                w.writerow([r[0], n, a.reps, "%.1f" % r[1], "%.1f" % r[2], "%.3g" % r[3], "%.3f" % r[4],
                            paths.get(r[0], ("",))[0]])
    if duck:
        duck.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
