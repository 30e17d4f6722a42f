#!/usr/bin/python3
"""The workers' per-row cost (issue 19, section 4): what one row costs a
thread when N threads scan one table at once, with and without memory-mapped
reads, for SQLite's own range sums and for gpu_aggregate, in the same run.

  bench/scan_cost.py [--rows 1e8] [--threads 1,2,16] [--reps 3] [--db DIR]
                     [--mmap 0,1] [--csv FILE] [--machine NAME]

The table is t(x REAL), random REALs (the aggregate benchmark's headline
table, made once and kept in --db; its pages warmed before timing).  Per thread
count N and mmap setting m, alternating, --reps times:
  sqlite  N Python threads, each with a fresh connection (PRAGMA mmap_size =
          the file's size when m = 1), each runs SQLite's own
          SELECT sum(x) FROM t WHERE rowid BETWEEN lo AND hi over 1/N of the
          rowids (the GIL is released while SQLite steps)
  ga      gpu_aggregate('t', 'x') with threads = N (PRAGMA mmap_size on the
          caller's connection when m = 1: its workers read as it does)
The cost a row per thread is wall seconds x N / rows, in ns.  CSV: machine,
rows, mode, mmap, threads, rep, s, ns_row_thread.  The summary prints the
medians; the prediction being tested is in bench/RESULTS.md.
"""
import argparse
import os
import sqlite3
import statistics
import sys
import threading
import time

import bench_db

HERE = os.path.dirname(os.path.abspath(__file__))
LIB = os.environ.get("GPUAGG_LIB") or os.path.join(os.path.dirname(HERE), "libgpuagg")


def sqlite_sums(path, rows, n, mmap_bytes):
    out = [None] * n
    step = (rows + n - 1) // n

    def work(k):
        con = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        if mmap_bytes:
            con.execute("PRAGMA mmap_size = %d" % mmap_bytes)
        lo, hi = 1 + k * step, min(rows, (k + 1) * step)
        out[k] = con.execute("SELECT sum(x) FROM t WHERE rowid BETWEEN ? AND ?",
                             (lo, hi)).fetchone()[0]
        con.close()

    ths = [threading.Thread(target=work, args=(k,)) for k in range(n)]
    t0 = time.perf_counter()
    for t in ths:
        t.start()
    for t in ths:
        t.join()
    return time.perf_counter() - t0


def ga_sum(con, n, mmap_bytes):
    con.execute("PRAGMA mmap_size = %d" % mmap_bytes)
    con.execute("SELECT gpuagg_config('threads', %d)" % n)
    t0 = time.perf_counter()
    con.execute("SELECT sum FROM gpu_aggregate('t', 'x')").fetchall()
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", default="1e8")
    ap.add_argument("--threads", default="1,2,16")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--mmap", default="0,1")
    ap.add_argument("--db", default=os.path.join(HERE, "out", "db"))
    ap.add_argument("--csv", default=os.path.join(HERE, "out", "scan_cost.csv"))
    ap.add_argument("--machine", default=os.uname().nodename)
    a = ap.parse_args()
    rows = int(float(a.rows))
    os.makedirs(a.db, exist_ok=True)
    os.makedirs(os.path.dirname(os.path.abspath(a.csv)), exist_ok=True)
    path = os.path.join(a.db, "scancost_%d.db" % rows)
    con = bench_db.connect(path, LIB, [("scan_min_rows", 0)])
    bench_db.make_table(con, "t", "x REAL", rows, "(abs(random()) % 1000000000) / 1000.0")
    size = os.path.getsize(path)
    con.execute("SELECT count(x) FROM t").fetchone()  # warm the pages
    res = {}
    with open(a.csv, "a") as f:
        if f.tell() == 0:
            f.write("machine,rows,mode,mmap,threads,rep,s,ns_row_thread\n")
        for rep in range(a.reps):
            for n in [int(x) for x in a.threads.split(",")]:
                for m in [int(x) for x in a.mmap.split(",")]:
                    mb = size * 2 if m else 0
                    for mode in ("sqlite", "ga"):
                        s = sqlite_sums(path, rows, n, mb) if mode == "sqlite" else ga_sum(con, n, mb)
                        ns = s * n / rows * 1e9
                        res.setdefault((mode, m, n), []).append(ns)
                        f.write("%s,%d,%s,%d,%d,%d,%.4f,%.1f\n" % (a.machine, rows, mode, m, n, rep, s, ns))
                        f.flush()
    print("mode    mmap threads  ns a row per thread (median of %d)" % a.reps)
    for (mode, m, n), v in sorted(res.items()):
        print("%-7s %4d %7d  %6.1f" % (mode, m, n, statistics.median(v)))


if __name__ == "__main__":
    sys.exit(main())
