#!/usr/bin/python3
"""gpu_aggregate against SQLite's own loop, in the same run (issue 10).

  bench/aggregate_bench.py [--rows 1e7,1e8] [--threads 1,2,4,8,16] [--reps 5]
                           [--cases sum,group100,group1e5,filter,filter1pct]
                           [--db DIR] [--csv FILE] [--machine NAME]
  bench/aggregate_bench.py --crossover [--threads 0] ...   (scan_min_rows)

Tables (file databases in --db, made once and kept; rollback journal):
  t(x REAL)                            rows random REALs: the headline
  tg(x REAL, g INTEGER, h INTEGER, f INTEGER)
                                       g = i % 100, h = i % 100000, f = i % 10
The page cache is warmed by reading every table before timing.

Cases, each as a pair timed in the same run, alternating (ref, gpu_aggregate,
ref, ...) --reps times for every thread count:
  sum       SELECT sum(x) FROM t            | gpu_aggregate('t', 'x')
  group100  SELECT g, sum(x) FROM tg GROUP BY g
                                            | gpu_aggregate('tg', 'x', NULL, 'g')
  group1e5  the same with h (100,000 groups)
  filter    SELECT sum(x) FROM tg WHERE f < 5
                                            | gpu_aggregate('tg', 'x', 'f < 5')
  filter1pct  the same with h < 1000 (1% of the rows: every piece sparse)
The equivalent GROUP BY query with the gpu_ aggregates (the 1-thread goal's
baseline) is timed once per case, at the first thread count: gpuref_s.

CSV (one line per rep): machine, rows, case, threads, rep, ref_s, ga_s,
gpuref_s, path, pieces, ref_cpu_s, ga_cpu_s (CPU seconds of the whole
process, all threads), load1 (the load average: other jobs share a small
machine).  The summary printed at the end is the median ratio
ref_s / ga_s per (rows, case, threads).

--crossover: for tables of 1e3 .. 1e6 rows, gpu_aggregate with threads = 1
(serial) against the parallel path (--threads, default 0 = every CPU,
scan_min_rows = 0), alternating: where the parallel path starts to pay is the
default of scan_min_rows.  CSV: machine, rows, threads, rep, serial_s,
parallel_s.
"""
import argparse
import json
import resource
import os
import sqlite3
import statistics
import sys
import time

import bench_db

HERE = os.path.dirname(os.path.abspath(__file__))
LIB = os.environ.get("GPUAGG_LIB") or os.path.join(os.path.dirname(HERE), "libgpuagg")

CASES = {
    "sum": ("SELECT sum(x) FROM t", ("t", "x", None, None), None),
    "group100": ("SELECT g, sum(x) FROM tg GROUP BY g", ("tg", "x", None, "g"),
                 "SELECT g, count(*), count(x), gpu_sum(x), gpu_total(x), gpu_avg(x), gpu_min(x), "
                 "gpu_max(x) FROM tg GROUP BY g"),
    "group1e5": ("SELECT h, sum(x) FROM tg GROUP BY h", ("tg", "x", None, "h"),
                 "SELECT h, count(*), count(x), gpu_sum(x), gpu_total(x), gpu_avg(x), gpu_min(x), "
                 "gpu_max(x) FROM tg GROUP BY h"),
    "filter": ("SELECT sum(x) FROM tg WHERE f < 5", ("tg", "x", "f < 5", None),
               "SELECT count(*), count(x), gpu_sum(x), gpu_total(x), gpu_avg(x), gpu_min(x), "
               "gpu_max(x) FROM tg WHERE f < 5"),
    # a selective filter: every piece is sparse, so every claim probes under
    # the dispenser mutex (issue 22's concern: does that serialise 16 workers?)
    "filter1pct": ("SELECT sum(x) FROM tg WHERE h < 1000", ("tg", "x", "h < 1000", None),
                   "SELECT count(*), count(x), gpu_sum(x), gpu_total(x), gpu_avg(x), gpu_min(x), "
                   "gpu_max(x) FROM tg WHERE h < 1000"),
}
CASES["sum"] = (CASES["sum"][0], CASES["sum"][1],
                "SELECT count(*), count(x), gpu_sum(x), gpu_total(x), gpu_avg(x), gpu_min(x), "
                "gpu_max(x) FROM t")


def connect(path):
    return bench_db.connect(path, LIB)


def make_db(path, n, need_tg):
    con = sqlite3.connect(path, isolation_level=None)
    bench_db.make_table(con, "t", "x REAL", n, "(abs(random()) % 1000000000) / 1000.0")
    if need_tg:
        bench_db.make_table(con, "tg", "x REAL, g INTEGER, h INTEGER, f INTEGER", n,
                            "(abs(random()) % 1000000000) / 1000.0, i % 100, i % 100000, i % 10")
    con.close()


def warm(path):
    with open(path, "rb") as f:
        while f.read(1 << 24):
            pass


def cpu_s():
    r = resource.getrusage(resource.RUSAGE_SELF)  # every thread of this process
    return r.ru_utime + r.ru_stime


LAST_CPU = [0.0]


def timed(con, sql, params=()):
    c0 = cpu_s()
    t0 = time.perf_counter()
    con.execute(sql, params).fetchall()
    LAST_CPU[0] = cpu_s() - c0
    return time.perf_counter() - t0


def ga_sql(args):
    table, x, f, g = args
    cols = "rows, count, sum, total, avg, min, max"
    return ("SELECT %s%s FROM gpu_aggregate(?, ?, ?, ?)" % ("grp, " if g else "", cols),
            (table, x, f, g))


def rowset(rows):
    """Rows as a sorted list, each value with its type (1 and 1.0 differ)."""
    return sorted(tuple((type(v).__name__, v) for v in r) for r in rows)


def last_scan(con):
    return json.loads(con.execute("SELECT gpuagg_info()").fetchone()[0])["last_scan"]


def bench(a):
    out = open(a.csv, "w")
    out.write("machine,rows,case,threads,rep,ref_s,ga_s,gpuref_s,path,pieces,ref_cpu_s,ga_cpu_s,load1\n")
    summary = []
    for n in a.rows:
        path = os.path.join(a.db, "aggbench_%d.db" % n)
        make_db(path, n, any(c != "sum" for c in a.cases))
        warm(path)
        con = connect(path)
        con.execute("SELECT gpuagg_config('scan_min_rows', 0)")
        for case in a.cases:
            ref, args, gpuref = CASES[case]
            timed(con, ref)  # warm the statement and the cache
            # the answer every thread count must give: the gpu_ GROUP BY query
            want = rowset(con.execute(gpuref).fetchall())
            for th in a.threads:
                con.execute("SELECT gpuagg_config('threads', ?)", (th,))
                sql, params = ga_sql(args)
                # warm (the pool's connections), and check the answer
                if rowset(con.execute(sql, params).fetchall()) != want:
                    print("WRONG: %s at %d threads differs from the gpu_ GROUP BY query"
                          % (case, th), flush=True)
                    a.wrong += 1
                # the 1-thread goal's baseline does not depend on threads
                gref = timed(con, gpuref) if gpuref and th == a.threads[0] else ""
                rs, gs = [], []
                for rep in range(a.reps):
                    r = timed(con, ref)
                    rc = LAST_CPU[0]
                    g = timed(con, sql, params)
                    gc = LAST_CPU[0]
                    ls = last_scan(con)
                    rs.append(r)
                    gs.append(g)
                    out.write("%s,%d,%s,%d,%d,%.6f,%.6f,%s,%s,%d,%.6f,%.6f,%.2f\n"
                              % (a.machine, n, case, th, rep, r, g,
                                 ("%.6f" % gref) if gref != "" and rep == 0 else "", ls["path"],
                                 ls["pieces"], rc, gc, os.getloadavg()[0]))
                    out.flush()
                ratio = statistics.median(rs) / statistics.median(gs)
                summary.append((n, case, th, statistics.median(rs), statistics.median(gs), ratio, gref))
                print("rows %d %-8s threads %2d: ref %.3f s, gpu_aggregate %.3f s, ratio %.2fx%s"
                      % (n, case, th, statistics.median(rs), statistics.median(gs), ratio,
                         (", gpu_ GROUP BY query %.3f s" % gref) if gref != "" else ""), flush=True)
        con.close()
    out.close()
    return summary


def crossover(a):
    out = open(a.csv, "w")
    out.write("machine,rows,threads,rep,serial_s,parallel_s,path\n")
    for n in (1000, 3000, 10000, 30000, 100000, 300000, 1000000):
        path = os.path.join(a.db, "aggcross_%d.db" % n)
        make_db(path, n, False)
        warm(path)
        con = connect(path)
        con.execute("SELECT gpuagg_config('scan_min_rows', 0)")
        sql, params = ga_sql(("t", "x", None, None))
        for th in a.threads:
            ss, ps = [], []
            for rep in range(a.reps):
                con.execute("SELECT gpuagg_config('threads', 1)")
                s = timed(con, sql, params)
                con.execute("SELECT gpuagg_config('threads', ?)", (th,))
                p = timed(con, sql, params)
                ls = last_scan(con)
                ss.append(s)
                ps.append(p)
                out.write("%s,%d,%d,%d,%.6f,%.6f,%s\n" % (a.machine, n, th, rep, s, p, ls["path"]))
            print("rows %8d: serial %.5f s, parallel (threads %d) %.5f s, ratio %.2fx"
                  % (n, statistics.median(ss), th, statistics.median(ps),
                     statistics.median(ss) / statistics.median(ps)), flush=True)
        con.close()
    out.close()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rows", default="1e7")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--cases", default="sum,group100,group1e5,filter")
    p.add_argument("--db", default=os.environ.get("TMPDIR", "/tmp"))
    p.add_argument("--csv", default=os.path.join(HERE, "out", "aggregate.csv"))
    p.add_argument("--machine", default=os.uname().nodename)
    p.add_argument("--crossover", action="store_true")
    a = p.parse_args()
    a.rows = [int(float(x)) for x in a.rows.split(",")]
    a.threads = [int(x) for x in a.threads.split(",")]
    a.cases = a.cases.split(",")
    os.makedirs(os.path.dirname(os.path.abspath(a.csv)), exist_ok=True)
    a.wrong = 0
    if a.crossover:
        crossover(a)
    else:
        bench(a)
        print("results: %s" % ("every answer equal to the gpu_ GROUP BY query's" if not a.wrong
                               else "%d WRONG" % a.wrong), flush=True)
    return 1 if a.wrong else 0


if __name__ == "__main__":
    sys.exit(main())
