#!/usr/bin/python3
"""pct_bench.py — medians per l_shipmode (issue 39): gpu_median through
gpu_query and through SQLite's own text, a median written in SQLite 3.40's
own SQL (window functions: what a user of the base build has), and DuckDB's
median(), on the same lineitem rows (bench/lineitem.py), in one run.

  bench/pct_bench.py [--rows 6e6] [--reps 5] [--db DIR] [--csv FILE]
                     [--base-reps 2] [--window-reps 2] [--duckdb-threads 2]

Modes, each rep in turn (the first rotating):
  gpu_query    CREATE VIRTUAL TABLE temp.q USING gpu_query('SELECT
               l_shipmode, gpu_median(l_extendedprice) ... GROUP BY
               l_shipmode'), with the column cache loaded (host): the text
               takes the serial path (planner/qpct.c; last_scan.why printed)
  sqlite       the same text on the connection (gpu_median in SQLite's
               GROUP BY)
  base_window  SQLite's own SQL for the same median (row_number() and
               count() over the partition, the middle one or two averaged),
               on the base build's connection (--base-lib), --window-reps reps
  duckdb       median(l_extendedprice) GROUP BY l_shipmode in DuckDB's
               native in-memory table, --duckdb-threads threads
  base_gpu_query  the gpu_query text on the base build's connection
               (--base-lib), its column cache loaded too (A/B: before
               issue 39's host-cache medians it declines, and the parallel
               scan answers), --base-reps reps
Times: wall and this process's CPU (resource.getrusage: user + sys) for
the SQLite modes; DuckDB's own seconds.  Medians of the reps.  The answers
are checked: gpu_query's equal SQLite's text bit for bit; DuckDB's and the
window's within 1e-12 (their averages round otherwise).
"""
import argparse
import csv
import os
import resource
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_db  # noqa: E402
import lineitem  # noqa: E402
from query_bench import DuckDB  # noqa: E402

TEXT = ("SELECT l_shipmode, gpu_median(l_extendedprice) AS m FROM lineitem "
        "GROUP BY l_shipmode ORDER BY l_shipmode")
DUCK = ("SELECT l_shipmode, median(l_extendedprice) AS m FROM lineitem "
        "GROUP BY l_shipmode ORDER BY l_shipmode")
WINDOW = ("SELECT l_shipmode, avg(x) FROM (SELECT l_shipmode, l_extendedprice AS x, "
          "row_number() OVER (PARTITION BY l_shipmode ORDER BY l_extendedprice) AS rn, "
          "count(*) OVER (PARTITION BY l_shipmode) AS c FROM lineitem) "
          "WHERE rn IN ((c + 1) / 2, (c + 2) / 2) GROUP BY l_shipmode ORDER BY l_shipmode")


def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def timed(con, sql):
    w0, c0 = time.perf_counter(), cpu()
    rows = con.execute(sql).fetchall()
    return time.perf_counter() - w0, cpu() - c0, rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", default="6e6")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--base-reps", type=int, default=2)
    ap.add_argument("--db", default="/tmp/gpuagg_query_bench")
    ap.add_argument("--lib", default=os.path.join(os.path.dirname(HERE), "libgpuagg"))
    ap.add_argument("--base-lib", default="/work/base4/libgpuagg")
    ap.add_argument("--window-reps", type=int, default=2)
    ap.add_argument("--csv", default="")
    ap.add_argument("--duckdb-threads", type=int, default=2)
    ap.add_argument("--duckdb-dir", default=os.path.join(HERE, "duckdb"))
    args = ap.parse_args()
    n = int(float(args.rows))
    path = os.path.join(args.db, "lineitem_%d.db" % n)
    if not os.path.exists(path):
        os.makedirs(args.db, exist_ok=True)
        lineitem.make(path, n)
    # device 'cpu': the host cache (a GPU entry declines medians)
    con = bench_db.connect(path, args.lib, [("threads", "2"), ("device", "cpu")])
    base = bench_db.connect(path, args.base_lib, [("device", "cpu")])
    con.execute("SELECT count(*) FROM lineitem").fetchone()  # warm the page cache
    t0 = time.time()
    con.execute("SELECT gpu_cache('lineitem', 'l_shipmode, l_extendedprice')").fetchall()
    print("# gpu_cache load %.1f s" % (time.time() - t0))
    con.execute("CREATE VIRTUAL TABLE temp.q USING gpu_query('%s')" % TEXT.replace("'", "''"))
    base.execute("SELECT gpuagg_config('threads', 2)").fetchall()
    base.execute("SELECT gpu_cache('lineitem', 'l_shipmode, l_extendedprice')").fetchall()
    base.execute("CREATE VIRTUAL TABLE temp.q USING gpu_query('%s')" % TEXT.replace("'", "''"))
    duck = DuckDB(args, n)
    if duck.why:
        print("# duckdb skipped: %s" % duck.why)
        duck = None
    times = {m: [] for m in ("gpu_query", "sqlite", "base_window", "duckdb", "base_gpu_query")}
    cpus = {m: [] for m in times}
    ref = None
    modes = ["gpu_query", "sqlite", "duckdb", "base_window", "base_gpu_query"]
    for rep in range(args.reps):
        order = modes[rep % len(modes):] + modes[:rep % len(modes)]
        for m in order:
            if m == "gpu_query":
                w, c, rows = timed(con, "SELECT * FROM q")
                why = con.execute("SELECT json_extract(gpuagg_info(), '$.last_scan.path', "
                                  "'$.last_scan.why')").fetchone()[0]
                if rep == 0:
                    print("# gpu_query last_scan: %s" % why)
            elif m == "sqlite":
                w, c, rows = timed(con, TEXT)
            elif m == "base_gpu_query":
                if rep >= args.base_reps:
                    continue
                w, c, rows = timed(base, "SELECT * FROM q")
                if rep == 0:
                    print("# base gpu_query last_scan: %s" % base.execute(
                        "SELECT json_extract(gpuagg_info(), '$.last_scan.path', '$.last_scan.why')").fetchone()[0])
            elif m == "base_window":
                if rep >= args.window_reps:
                    continue
                w, c, rows = timed(base, WINDOW)
            else:
                if not duck:
                    continue
                w, rows = duck.query(DUCK)
                c = float("nan")
            times[m].append(w)
            cpus[m].append(c)
            if m == "sqlite":
                ref = ref or rows
            if m == "gpu_query" and ref and rows != ref:
                print("# MISMATCH gpu_query: %r vs %r" % (rows, ref))
            if m == "base_gpu_query" and ref and rows != ref:
                print("# MISMATCH base gpu_query: %r vs %r" % (rows, ref))
            if m in ("duckdb", "base_window") and ref:
                for a, b in zip(rows, ref):
                    if a[0] != b[0] or abs(a[1] - b[1]) > 1e-12 * abs(b[1]):
                        print("# %s differs: %r vs %r" % (m, a, b))
    print("# %d rows, %d reps; medians (ms): wall, this process's CPU" % (n, args.reps))
    out = []
    for m in times:
        if not times[m]:
            continue
        w = 1000 * statistics.median(times[m])
        c = 1000 * statistics.median(cpus[m]) if m != "duckdb" else float("nan")
        print("%-12s wall %8.1f  cpu %8.1f  (%d reps)" % (m, w, c, len(times[m])))
        out.append((m, len(times[m]), round(w, 1), round(c, 1) if c == c else ""))
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            wr = csv.writer(f)
            wr.writerow(["mode", "reps", "wall_ms_median", "cpu_ms_median", "rows", "query"])
            for m, k, w, c in out:
                wr.writerow([m, k, w, c, n, "median(l_extendedprice) per l_shipmode"])
    if duck:
        duck.close()


if __name__ == "__main__":
    main()
