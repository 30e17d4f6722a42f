#!/usr/bin/python3
"""A/B of the workers' probe path on the Star Schema Benchmark (issue 38
§3.1): two builds of gpuagg loaded in one process, interleaved, against
SQLite's own text, on CPU time.

  bench/ssb_probe_ab.py --base /work/base5/libgpuagg --new ./libgpuagg
        [--sf 0.2] [--reps 7] [--threads 2] [--queries q2.2,...]
        [--db DIR] [--csv FILE] [--machine NAME]

Modes, each rep in a rotating order: sqlite (the text on a plain
connection), base and new (gpu_query through the scan at --threads, each
build on its own connection), base_join (the base build with
GPUAGG_DIM_PROBE=0 while its call runs: SQLite's join in every worker).
Each call's CPU time is this process's user + system time over it (every
thread: SQLite's and the workers'); wall times are kept but are noise on a
shared machine.  Every gpu_query answer must equal, value and type, SQLite's
text with sum replaced by gpu_sum (exit 1 on a difference).  The database is
bench/ssb.py's (made once under --db).  CSV lines: machine, sf, query, mode,
threads, rep, ms, cpu_ms, probe (last_scan.join.probe.used).
"""
import argparse
import json
import os
import resource
import sqlite3
import statistics
import sys
import time

import ssb
from dashboard_bench import gpu_text, typed

MODES = ["sqlite", "base", "base_join", "new"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True)
    ap.add_argument("--new", required=True)
    ap.add_argument("--sf", type=float, default=0.2)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--queries", default=",".join(ssb.QUERIES))
    ap.add_argument("--db", default="/tmp/gpuagg_ssb_bench")
    ap.add_argument("--csv", default=None)
    ap.add_argument("--machine", default=os.uname().nodename)
    args = ap.parse_args()
    qs = args.queries.split(",")
    path = os.path.join(args.db, "ssb_%g.db" % args.sf)
    ssb.make(path, args.sf)
    cons = {"sqlite": sqlite3.connect(path, isolation_level=None)}
    for mode, lib in (("base", args.base), ("base_join", args.base), ("new", args.new)):
        if mode == "base_join":  # planned and run with the probe path off
            os.environ["GPUAGG_DIM_PROBE"] = "0"
        c = sqlite3.connect(path, isolation_level=None)
        c.enable_load_extension(True)
        c.load_extension(lib)
        c.execute("SELECT gpuagg_config('threads', ?)", (args.threads,))
        for q in qs:
            c.execute("CREATE VIRTUAL TABLE temp.q%s USING gpu_query('%s')"
                      % (q.replace(".", "_"), ssb.QUERIES[q].replace("'", "''")))
        cons[mode] = c
        os.environ.pop("GPUAGG_DIM_PROBE", None)
    ref = {q: typed(cons["new"].execute(gpu_text(ssb.QUERIES[q])).fetchall()) for q in qs}
    cpu, bad = {}, 0
    out = open(args.csv, "a") if args.csv else None
    for rep in range(args.reps):
        order = MODES[rep % len(MODES):] + MODES[:rep % len(MODES)]
        for q in qs:
            for m in order:
                sql = ssb.QUERIES[q] if m == "sqlite" else "SELECT * FROM q" + q.replace(".", "_")
                if m == "base_join":
                    os.environ["GPUAGG_DIM_PROBE"] = "0"
                r0 = resource.getrusage(resource.RUSAGE_SELF)
                t0 = time.perf_counter()
                rows = cons[m].execute(sql).fetchall()
                ms = (time.perf_counter() - t0) * 1e3
                r1 = resource.getrusage(resource.RUSAGE_SELF)
                os.environ.pop("GPUAGG_DIM_PROBE", None)
                c = ((r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)) * 1e3
                cpu.setdefault((m, q), []).append(c)
                used = ""
                if m != "sqlite":
                    ls = json.loads(cons[m].execute("SELECT gpuagg_info()").fetchone()[0])["last_scan"]
                    used = str(((ls.get("join") or {}).get("probe") or {}).get("used"))
                    if typed(rows) != ref[q]:
                        bad += 1
                        print("# WRONG %s %s rep %d" % (m, q, rep), flush=True)
                if out:
                    out.write("%s,%g,%s,%s,%d,%d,%.3f,%.1f,%s\n" % (
                        args.machine, args.sf, q, m, 1 if m == "sqlite" else args.threads, rep, ms, c, used))
                    out.flush()
    med = statistics.median
    print("# SSB SF %g, %d reps, %d threads: medians of CPU ms; new/base, new/base_join, sqlite/new"
          % (args.sf, args.reps, args.threads))
    tot = dict.fromkeys(MODES, 0.0)
    for q in qs:
        v = {m: med(cpu[(m, q)]) for m in MODES}
        for m in MODES:
            tot[m] += v[m]
        print("%-6s sqlite %7.1f  base %7.1f  base_join %7.1f  new %7.1f   %.3f  %.3f  %.3f" % (
            q, v["sqlite"], v["base"], v["base_join"], v["new"], v["new"] / v["base"],
            v["new"] / v["base_join"], v["sqlite"] / v["new"]))
    print("all    sqlite %7.1f  base %7.1f  base_join %7.1f  new %7.1f   %.3f  %.3f  %.3f" % (
        tot["sqlite"], tot["base"], tot["base_join"], tot["new"], tot["new"] / tot["base"],
        tot["new"] / tot["base_join"], tot["sqlite"] / tot["new"]))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
