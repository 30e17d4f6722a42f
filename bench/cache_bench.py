#!/usr/bin/python3
"""gpu_cache's benchmark (issue 11): repeated analytics from the column cache
against SQLite's own loop, the uncached parallel gpu_aggregate and DuckDB, on
the same values, in the same run.

  bench/cache_bench.py [--rows 1e7] [--reps 7] [--db DIR] [--csv FILE]
                       [--machine NAME] [--threads 0] [--queries a,b,load]
                       [--modes sqlite,parallel,cpu,gpu,duckdb]
                       [--duckdb-threads N] [--duckdb-dir bench/duckdb]

The table (a file database in --db, made once and kept; rollback journal):
  c(x REAL, k INTEGER, y INTEGER), row i = 1..rows:
    x = ((i * 2654435761) % 1000003) / 1000.0   (random-looking REALs)
    k = (i * 7919) % 1000                       (1000 distinct keys)
    y = (i * 104729) % 1000                     (y > 500: about half)
DuckDB builds the same values with the same integer arithmetic in an
in-memory DOUBLE/BIGINT table.  The page cache is warmed before timing.

Queries, each timed from the SQL call to the result rows (fetchall):
  a     sqlite:   SELECT sum(x) FROM c
        the rest: gpu_aggregate('c', 'x')       DuckDB: sum(x), fsum(x)
  b     sqlite:   SELECT k, sum(x) FROM c WHERE y > 500 GROUP BY k
        the rest: gpu_aggregate('c', 'x', 'y > 500', 'k')
                                                DuckDB: the same with sum, fsum
  b_first  b's first run after a load (the GPU builds k's dictionary then)
  load  gpu_cache('c', 'x, k, y') into GPU memory (gpu) and host memory (cpu)
        against the uncached parallel gpu_aggregate('c', 'x', 'y > 500', 'k'),
        which reads the same three columns (parallel)
Modes: sqlite (SQLite's own loop), parallel (gpu_aggregate, no cache entry,
`threads`), cpu (the host cache: device = 'cpu', all cores), gpu (the GPU
cache; skipped without a usable GPU), duckdb (skipped with a message when
node or the @duckdb/node-api package is absent: make bench-duckdb-setup).
Every rep runs every mode once, in turn (alternating, so that a busy machine
shares out its bursts fairly); the summary is medians and their ratio to
sqlite's in the same run.

The answers of parallel, cpu and gpu (every row, value and type) must be
identical: the run prints a check line per query and exits 1 otherwise.

CSV (one line per measurement): machine, rows, query, mode, threads, rep,
seconds, path, load1, result.  `result` is the answer's sum for a, the sum
of the per-group sums for b (DuckDB's are not exact: that is the point).
"""
import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time

import bench_db

HERE = os.path.dirname(os.path.abspath(__file__))
LIB = os.environ.get("GPUAGG_LIB") or os.path.join(os.path.dirname(HERE), "libgpuagg")

REF = {"a": "SELECT sum(x) FROM c",
       "b": "SELECT k, sum(x) FROM c WHERE y > 500 GROUP BY k"}
AGG = {"a": ("c", "x", None, None), "b": ("c", "x", "y > 500", "k")}


def connect(path, device=None, threads=0):
    return bench_db.connect(path, LIB, [("threads", threads)] + ([("device", device)] if device else []))


def make_db(path, n):
    con = sqlite3.connect(path, isolation_level=None)
    bench_db.make_table(con, "c", "x REAL, k INTEGER, y INTEGER", n,
                        "((i * 2654435761) % 1000003) / 1000.0, (i * 7919) % 1000, (i * 104729) % 1000",
                        label=path)
    con.execute("SELECT count(*), sum(x) FROM c").fetchone()  # warm the page cache
    con.close()


def timed(con, sql, args=()):
    t0 = time.perf_counter()
    rows = con.execute(sql, args).fetchall()
    return time.perf_counter() - t0, rows


def answer(query, rows):
    """One number per answer: a's sum, b's sum of group sums."""
    if query == "a":
        return rows[0][-1] if len(rows[0]) == 1 else rows[0][3]
    return sum(r[1] if len(r) == 2 else r[3] for r in rows)


def last_path(con):
    return json.loads(con.execute("SELECT gpuagg_info()").fetchone()[0])["last_scan"]["path"]


def gpu_usable(con):
    return json.loads(con.execute("SELECT gpuagg_info()").fetchone()[0]).get("gpu_usable", False)


def duckdb_cmd(args):
    node = shutil.which("node")
    mod = os.path.join(args.duckdb_dir, "node_modules", "@duckdb", "node-api")
    if not node:
        return None, "no node"
    if not os.path.isdir(mod):
        return None, "no %s (make bench-duckdb-setup installs it with npm)" % mod
    return [node, os.path.join(HERE, "duckdb_bench.mjs")], None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", default="1e7")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--db", default="/tmp/gpuagg_cache_bench")
    ap.add_argument("--csv", default=os.path.join(HERE, "out", "cache.csv"))
    ap.add_argument("--machine", default=os.uname().nodename)
    ap.add_argument("--threads", type=int, default=0, help="gpuagg_config threads")
    ap.add_argument("--queries", default="a,b,load")
    ap.add_argument("--modes", default="sqlite,parallel,cpu,gpu,duckdb")
    ap.add_argument("--duckdb-threads", type=int, default=0, help="0: as many as CPUs")
    ap.add_argument("--duckdb-dir", default=os.path.join(HERE, "duckdb"))
    ap.add_argument("--sqlite-b-reps", type=int, default=None,
                    help="reps of SQLite's own (b) (its GROUP BY sorts every passing row: "
                         "a minute at 1e8 rows); default --reps")
    args = ap.parse_args()
    n = int(float(args.rows))
    queries = args.queries.split(",")
    modes = args.modes.split(",")
    os.makedirs(args.db, exist_ok=True)
    os.makedirs(os.path.dirname(os.path.abspath(args.csv)), exist_ok=True)
    path = os.path.join(args.db, "cache_%d.db" % n)
    make_db(path, n)
    ref = connect(path, threads=args.threads)          # sqlite and parallel: no entry
    host = connect(path, "cpu", args.threads)          # the host cache
    gpu = connect(path, "gpu", args.threads) if "gpu" in modes else None
    if gpu is not None and not gpu_usable(gpu):
        print("# SKIP gpu: no usable GPU (%s)" %
              json.loads(gpu.execute("SELECT gpuagg_info()").fetchone()[0]).get("why"))
        gpu.close()
        gpu = None
    ncpu = os.cpu_count() or 1
    out = open(args.csv, "a")
    if out.tell() == 0:
        out.write("machine,rows,query,mode,threads,rep,seconds,path,load1,result\n")

    def record(query, mode, rep, secs, path_, result, threads=None):
        out.write("%s,%d,%s,%s,%d,%d,%.6f,%s,%.2f,%r\n"
                  % (args.machine, n, query, mode, threads or args.threads or ncpu, rep, secs,
                     path_, os.getloadavg()[0], result))
        out.flush()
        res.setdefault((query, mode), []).append(secs)

    res = {}
    first = {}  # (query, mode) -> the answer's rows at rep 0, for the check

    def keep(q, mode, rows):
        if (q, mode) not in first:
            first[(q, mode)] = sorted(tuple((type(v).__name__, repr(v)) for v in r) for r in rows)
    if "load" in queries:
        for rep in range(args.reps):
            if "parallel" in modes:
                s, rows = timed(ref, "SELECT * FROM gpu_aggregate(?, ?, ?, ?)", AGG["b"])
                record("load", "parallel", rep, s, last_path(ref), answer("b", rows))
            for mode, con in (("cpu", host), ("gpu", gpu)):
                if con is None or mode not in modes:
                    continue
                con.execute("SELECT gpu_cache_drop('c')")
                s, rows = timed(con, "SELECT gpu_cache('c', 'x, k, y')")
                e = json.loads(con.execute("SELECT gpuagg_info()").fetchone()[0])["cache"]["entries"]
                record("load", mode, rep, s, e[0]["where"] if e else "none", rows[0][0])
    for mode, con in (("cpu", host), ("gpu", gpu)):
        if con is None:
            continue
        if not json.loads(con.execute("SELECT gpuagg_info()").fetchone()[0])["cache"]["entries"]:
            con.execute("SELECT gpu_cache('c', 'x, k, y')")
        if "b" in queries and mode in modes:
            # the first grouped query after a load: on the GPU it also builds
            # the group key's dictionary (kept with the entry)
            s, rows = timed(con, "SELECT * FROM gpu_aggregate(?, ?, ?, ?)", AGG["b"])
            record("b_first", mode, 0, s, last_path(con), answer("b", rows))
    for q in [q for q in queries if q in ("a", "b")]:
        for rep in range(args.reps):
            b_reps = args.reps if args.sqlite_b_reps is None else args.sqlite_b_reps
            if "sqlite" in modes and (q != "b" or rep < b_reps):
                s, rows = timed(ref, REF[q])
                record(q, "sqlite", rep, s, "sqlite", answer(q, rows), threads=1)
            if "parallel" in modes:
                s, rows = timed(ref, "SELECT * FROM gpu_aggregate(?, ?, ?, ?)", AGG[q])
                record(q, "parallel", rep, s, last_path(ref), answer(q, rows))
                keep(q, "parallel", rows)
            for mode, con in (("cpu", host), ("gpu", gpu)):
                if con is None or mode not in modes:
                    continue
                s, rows = timed(con, "SELECT * FROM gpu_aggregate(?, ?, ?, ?)", AGG[q])
                p = last_path(con)
                if p != "cache":
                    print("# WARNING %s %s took the %s path" % (q, mode, p))
                record(q, mode, rep, s, p, answer(q, rows))
                keep(q, mode, rows)
    if "duckdb" in modes:
        cmd, why = duckdb_cmd(args)
        if not cmd:
            print("# SKIP duckdb: %s" % why)
        else:
            dt = args.duckdb_threads or ncpu
            env = dict(os.environ, NODE_PATH=os.path.join(args.duckdb_dir, "node_modules"))
            p = subprocess.run(cmd + [str(n), str(dt), str(args.reps),
                                      ",".join(q for q in queries if q in ("a", "b"))],
                               capture_output=True, text=True, env=env,
                               cwd=args.duckdb_dir)
            if p.returncode != 0:
                print("# duckdb failed: %s" % p.stderr[-800:])
            for line in p.stdout.splitlines():
                d = json.loads(line)
                if "build_s" in d:
                    print("# duckdb built its table in %.1f s" % d["build_s"])
                    continue
                record(d["query"], "duckdb_" + d["agg"], d["rep"], d["seconds"], "duckdb",
                       d["result"], threads=dt)
    out.close()
    bad = 0
    for q in ("a", "b"):  # every exact answer, value and type, must agree
        got = {m: v for (qq, m), v in first.items() if qq == q}
        if len(set(map(repr, got.values()))) > 1:
            bad += 1
            print("# FAIL: the answers to %s differ between %s" % (q, sorted(got)))
        elif len(got) > 1:
            print("# check: %s identical on %s (all rows, values and types)" % (q, sorted(got)))
    print("# %s, %d rows, %d CPUs; median seconds (ratio sqlite / mode)" % (args.machine, n, ncpu))
    for q in queries:
        base = res.get((q, "sqlite")) or res.get((q, "parallel"))
        for (qq, mode), v in sorted(res.items()):
            if qq != q:
                continue
            m = statistics.median(v)
            r = statistics.median(base) / m if base else float("nan")
            print("%-5s %-13s %10.4f s  x%8.1f  (%d reps)" % (q, mode, m, r, len(v)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
