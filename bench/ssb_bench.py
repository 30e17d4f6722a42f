#!/usr/bin/python3
"""The Star Schema Benchmark's 13 queries (bench/ssb.py, issue 38) through
SQLite's own text, through gpu_query and through DuckDB's native tables of
the same rows, in the same run.

  bench/ssb_bench.py [--sf 1] [--reps 5] [--threads 0] [--queries q1.1,...]
        [--modes sqlite,gpu_query,host_cache,duckdb] [--duckdb-threads 2]
        (modes also: gpu_cache, gpu_cache_all)
        [--machine NAME] [--csv FILE] [--plans FILE] [--db DIR]

The file DIR/ssb_<sf>.db is made once and kept (bench/ssb.py: ANALYZEd,
dimension keys INTEGER PRIMARY KEYs).  Modes: sqlite (the text on a plain
connection with the extension loaded), gpu_query (CREATE VIRTUAL TABLE
temp.q USING gpu_query('<text>'), then SELECT * FROM q; threads =
--threads, 0 = every core), host_cache (the same on a connection whose
gpu_cache holds, in host memory, the columns ssb.CACHE_COLUMNS names: the
star join from the cache, issue 38 §3.2; the loads are not timed), gpu_cache
(lineorder's columns in GPU memory, the dimensions' in host memory: the
star join from the GPU cache, issue 38 §3.3, engine/cache/cache_gpu_star.c),
gpu_cache_all (every table's in GPU memory: the dimensions are copied back
for each build), duckdb (bench/duckdb_query.mjs, its own tables
of the same rows).  For the GPU modes the summary gives each query's bytes
of lineorder's columns read (the columns its text names, 8 bytes a row
each) over its median time, against the H200's 4.8 TB/s.  A text that gpu_query refuses is reported ("refused:
...") and that mode skips it; last_scan.path and .why go into the CSV.

Every rep runs every mode once, the first mode rotating with the rep;
medians and ratios against SQLite's median of the same run (x = sqlite /
mode).  gpu_query's rows must equal, value and type, those of SQLite's text
with sum replaced by gpu_sum (exit status 1 on a difference); DuckDB's are
compared and a difference reported.  --plans writes each query's EXPLAIN
QUERY PLAN on SQLite (default: beside the CSV, .plans.txt).

CSV (one line per measurement): machine, sf, query, mode, threads, rep, ms,
cpu_ms (this process's user + system CPU time over the call, every thread
of it: SQLite's and gpu_query's workers; empty for duckdb, another
process), path, why.  Default: bench/results/ssb_<machine>_<date>.csv.
"""
import argparse
import json
import os
import resource
import sqlite3
import statistics
import sys
import time

import bench_db
import ssb
from dashboard_bench import close_rows, gpu_text, scan_info, typed
from query_bench import DuckDB

HERE = os.path.dirname(os.path.abspath(__file__))
LIB = os.environ.get("GPUAGG_LIB") or os.path.join(os.path.dirname(HERE), "libgpuagg")
MODES = ["sqlite", "gpu_query", "host_cache", "duckdb", "gpu_cache", "gpu_cache_all"]
HBM_BPS = 4.8e12  # the H200's memory bandwidth


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sf", type=float, default=1.0)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--db", default="/tmp/gpuagg_ssb_bench")
    ap.add_argument("--csv", default=None)
    ap.add_argument("--plans", default=None)
    ap.add_argument("--machine", default=os.uname().nodename)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--queries", default=",".join(ssb.QUERIES))
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--duckdb-threads", type=int, default=2)
    ap.add_argument("--duckdb-dir", default=os.path.join(HERE, "duckdb"))
    args = ap.parse_args()
    queries = args.queries.split(",")
    modes = args.modes.split(",")
    for q in queries:
        if q not in ssb.QUERIES:
            ap.error("unknown query %r (%s)" % (q, ",".join(ssb.QUERIES)))
    for m in modes:
        if m not in MODES:
            ap.error("unknown mode %r (%s)" % (m, ",".join(MODES)))
    csv_path = args.csv or os.path.join(HERE, "results", "ssb_%s_%s.csv"
                                        % (args.machine, time.strftime("%Y-%m-%d")))
    plans_path = args.plans or os.path.splitext(csv_path)[0] + ".plans.txt"
    os.makedirs(os.path.dirname(os.path.abspath(csv_path)), exist_ok=True)
    path = os.path.join(args.db, "ssb_%g.db" % args.sf)
    ssb.make(path, args.sf)
    threads = args.threads or os.cpu_count() or 1

    cons = {"sqlite": bench_db.connect(path, LIB)}
    with open(plans_path, "w") as f:
        for q in queries:
            f.write("%s: %s\n" % (q, ssb.QUERIES[q]))
            for r in cons["sqlite"].execute("EXPLAIN QUERY PLAN " + ssb.QUERIES[q]):
                f.write("  %s\n" % r[3])
    runs = {("sqlite", q) for q in queries}
    for mode in ("gpu_query", "host_cache", "gpu_cache", "gpu_cache_all"):
        if mode not in modes:
            continue
        g = cons[mode] = bench_db.connect(path, LIB, [("threads", args.threads)])
        if mode == "host_cache":
            g.execute("SELECT gpuagg_config('device', 'cpu')").fetchall()
            for t, cols in ssb.CACHE_COLUMNS.items():
                g.execute("SELECT gpu_cache(?, ?)", (t, cols)).fetchall()
        if mode.startswith("gpu_cache"):  # issue 38 §3.3
            t0 = time.perf_counter()
            for t, cols in ssb.CACHE_COLUMNS.items():
                dev = "auto" if t == "lineorder" or mode == "gpu_cache_all" else "cpu"
                g.execute("SELECT gpuagg_config('device', ?)", (dev,)).fetchall()
                g.execute("SELECT gpu_cache(?, ?)", (t, cols)).fetchall()
            g.execute("SELECT gpuagg_config('device', 'auto')").fetchall()
            info = json.loads(g.execute("SELECT gpuagg_info()").fetchone()[0])
            where = {e.get("table"): e.get("where") for e in (info.get("cache") or {}).get("entries", [])}
            print("# %s: loaded in %.1f s; entries %s" % (mode, time.perf_counter() - t0, where),
                  flush=True)
        for q in queries:
            name = "q" + q.replace(".", "_")
            try:
                g.execute("CREATE VIRTUAL TABLE temp.%s USING gpu_query('%s')"
                          % (name, ssb.QUERIES[q].replace("'", "''")))
                runs.add((mode, q))
            except sqlite3.Error as e:
                print("# %s %s: refused: %s" % (mode, q, e), flush=True)
    duck = None
    if "duckdb" in modes:
        duck = DuckDB(args, 0, ssb.duckdb_sql(args.sf))
        if duck.why:
            print("# SKIP duckdb: %s" % duck.why, flush=True)
            duck = None
        else:
            runs |= {("duckdb", q) for q in queries}

    ref = {q: typed(cons["sqlite"].execute(gpu_text(ssb.QUERIES[q])).fetchall())
           for q in queries}
    bad = 0
    times, cpus = {}, {}
    with open(csv_path, "a") as out:
        for rep in range(args.reps):
            order = modes[rep % len(modes):] + modes[:rep % len(modes)]
            for q in queries:
                for mode in order:
                    if (mode, q) not in runs:
                        continue
                    path_, why, cpu = "", "", None
                    if mode == "duckdb":
                        try:
                            s, rows = duck.query(ssb.QUERIES[q])
                        except RuntimeError as e:
                            print("# duckdb %s: %s" % (q, e), flush=True)
                            runs.discard((mode, q))
                            continue
                        ms = s * 1e3
                        plain = [tuple(v for _, v in r) for r in ref[q]]
                        if rep == 0 and not close_rows(plain, rows):
                            print("# duckdb %s: rows differ from the exact reference" % q,
                                  flush=True)
                    else:
                        con = cons[mode]
                        sql = ssb.QUERIES[q] if mode == "sqlite" else \
                            "SELECT * FROM q" + q.replace(".", "_")
                        r0 = resource.getrusage(resource.RUSAGE_SELF)
                        t0 = time.perf_counter()
                        rows = con.execute(sql).fetchall()
                        ms = (time.perf_counter() - t0) * 1e3
                        r1 = resource.getrusage(resource.RUSAGE_SELF)
                        cpu = ((r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)) * 1e3
                        cpus.setdefault((mode, q), []).append(cpu)
                        if mode != "sqlite":
                            path_, why = scan_info(con)
                            if typed(rows) != ref[q]:
                                bad += 1
                                print("# WRONG %s %s rep %d: %r != %r" % (
                                    mode, q, rep, rows[:3], ref[q][:3]), flush=True)
                    t = {"sqlite": 1, "duckdb": args.duckdb_threads}.get(mode, threads)
                    times.setdefault((mode, q), []).append(ms)
                    out.write("%s,%g,%s,%s,%d,%d,%.3f,%s,%s,%s\n" % (
                        args.machine, args.sf, q, mode, t, rep, ms,
                        "" if cpu is None else "%.1f" % cpu, path_, why[:200].replace(",", ";")))
                    out.flush()
    print("# SSB SF %g, %d reps, threads %d; medians in ms (x = sqlite / mode)"
          % (args.sf, args.reps, threads))
    sums = {}
    for q in queries:
        base = statistics.median(times[("sqlite", q)]) if times.get(("sqlite", q)) else None
        cells = []
        for mode in modes:
            v = times.get((mode, q))
            if v:
                m = statistics.median(v)
                sums[mode] = sums.get(mode, 0.0) + m
                c = cpus.get((mode, q))
                cells.append("%s %.1f (%s)%s" % (mode, m, "%.2fx" % (base / m) if base else "-",
                                                 " cpu %.1f" % statistics.median(c)
                                                    if c else ""))
            else:
                cells.append("%s -" % mode)
        print("%-6s %s" % (q, "  ".join(cells)), flush=True)
    print("# sums of the medians: %s" % ", ".join("%s %.1f ms" % kv for kv in sums.items()))
    nrows = cons["sqlite"].execute("SELECT count(*) FROM lineorder").fetchone()[0]
    for mode in ("gpu_cache", "gpu_cache_all"):
        if mode not in modes:
            continue
        cells = []
        for q in queries:  # lineorder's bytes read over the median time
            v = times.get((mode, q))
            cols = [c.strip() for c in ssb.CACHE_COLUMNS["lineorder"].split(",")
                    if c.strip() in ssb.QUERIES[q]]
            if v:
                bps = len(cols) * 8 * nrows / (statistics.median(v) / 1e3)
                cells.append("%s %d cols %.0f GB/s (%.1f%%)" % (q, len(cols), bps / 1e9,
                                                                  100 * bps / HBM_BPS))
        print("# %s, lineorder bytes / time against 4.8 TB/s: %s" % (mode, "; ".join(cells)))
    if duck:
        duck.close()
    print("# csv: %s; plans: %s" % (csv_path, plans_path))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
