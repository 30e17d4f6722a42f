#!/usr/bin/python3
"""d4 of bench/query_bench.py from the host cache, A/B by CPU time (issue 37,
session 5): the rows straight from the groups (ext/query/qdirect.c) against
SQLite's post query, interleaved in one process.

  bench/d4_direct_ab.py --db FILE --base-lib LIB [--reps 7] [--threads 2]
                        [--csv FILE] [--machine NAME] [--query d4]
                        [--device cpu|gpu]

FILE is a lineitem database of bench/lineitem.py (query_bench.py's
DIR/lineitem_<rows>.db).  --device gpu puts the three entries on the GPU
(gpu_cache's device setting): the engine is then cache_gpu_query.c's.

Variants, each its own connection with its own cache entry of the query's
columns: base (--base-lib, e.g. the build before the change), post (this
build with GPUAGG_POST_DIRECT=0: SQLite's post query) and direct (this
build).  Per rep, each variant in turn (the first rotating), three
measures: `first` (execute and the first row: xFilter until rows are
ready: the engine's time), `sql` (SELECT count(*), total of the last
column over the call: every row through SQLite's VDBE, no Python objects)
and `fetch` (execute and fetchall: what a Python caller sees).  Wall and
CPU (resource.getrusage of this process: every thread) in ms; the summary
is medians and CPU ratios to base.  Every variant's rows must equal base's
(sorted), else exit status 1.
"""
import argparse
import os
import resource
import sqlite3
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import query_bench  # noqa: E402

LIB = os.environ.get("GPUAGG_LIB") or os.path.join(os.path.dirname(HERE), "libgpuagg")


def cpu():
    u = resource.getrusage(resource.RUSAGE_SELF)
    return (u.ru_utime + u.ru_stime) * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", required=True)
    ap.add_argument("--base-lib", required=True)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--query", default="d4")
    ap.add_argument("--cols", default="l_partkey, l_quantity, l_shipdate")
    ap.add_argument("--csv")
    ap.add_argument("--machine", default="vm2")
    ap.add_argument("--device", default="cpu")
    a = ap.parse_args()
    text, params = query_bench.QUERIES[a.query]
    rows_n = sqlite3.connect(a.db).execute("SELECT max(rowid) FROM lineitem").fetchone()[0]
    args = params(rows_n)
    cons = {}
    for name, lib in (("base", a.base_lib), ("post", LIB), ("direct", LIB)):
        c = sqlite3.connect(a.db, isolation_level=None)
        c.enable_load_extension(True)
        c.load_extension(lib)
        c.execute("SELECT gpuagg_config('threads', ?)", (a.threads,))
        c.execute("SELECT gpuagg_config('device', ?)", (a.device,))
        c.execute("SELECT gpu_cache('lineitem', ?)", (a.cols,)).fetchall()
        c.execute("CREATE VIRTUAL TABLE temp.q USING gpu_query('%s')" % text.replace("'", "''"))
        cons[name] = c
    call = "SELECT * FROM temp.q(%s)" % ",".join("?" * len(args))
    ncols = len(cons["base"].execute(call, args).description)
    last = [r[1] for r in cons["base"].execute("PRAGMA table_info(q)")][ncols - 1]
    sql = "SELECT count(*), total(\"%s\") FROM temp.q(%s)" % (last, ",".join("?" * len(args)))
    ref = None
    out = []
    names = list(cons)
    for rep in range(a.reps):
        order = names[rep % 3:] + names[:rep % 3]
        for name in order:
            c = cons[name]
            if name == "post":
                os.environ["GPUAGG_POST_DIRECT"] = "0"
            for meas in ("first", "sql", "fetch"):
                t0, c0 = time.perf_counter(), cpu()
                if meas == "first":
                    cur = c.execute(call, args)
                    cur.fetchone()
                elif meas == "sql":
                    c.execute(sql, args).fetchone()
                else:
                    rows = c.execute(call, args).fetchall()
                ms, cms = (time.perf_counter() - t0) * 1e3, cpu() - c0
                if meas == "first":
                    cur.close()
                out.append((name, rep, meas, ms, cms))
            os.environ.pop("GPUAGG_POST_DIRECT", None)
            info = c.execute("SELECT json_extract(gpuagg_info(), '$.last_scan.path', "
                             "'$.last_scan.post')").fetchone()[0]
            if rep == 0:
                print("# %s: %d rows, last_scan [path, post] %s" % (name, len(rows), info), flush=True)
            key = sorted(rows, key=repr)
            if ref is None:
                ref = key
            elif key != ref:
                print("rows of %s differ from the first variant's" % name)
                sys.exit(1)
    print("%-8s %-6s %10s %10s %8s" % ("variant", "meas", "wall_ms", "cpu_ms", "cpu/base"))
    med = {}
    for name in names:
        for meas in ("first", "sql", "fetch"):
            w = statistics.median(o[3] for o in out if o[0] == name and o[2] == meas)
            cm = statistics.median(o[4] for o in out if o[0] == name and o[2] == meas)
            med[name, meas] = (w, cm)
    for name in names:
        for meas in ("first", "sql", "fetch"):
            w, cm = med[name, meas]
            print("%-8s %-6s %10.1f %10.1f %8.2f" % (name, meas, w, cm, cm / med["base", meas][1]))
    if a.csv:
        new = not os.path.exists(a.csv)
        with open(a.csv, "a") as f:
            if new:
                f.write("machine,rows,query,variant,device,threads,rep,measure,ms,cpu_ms\n")
            for name, rep, meas, ms, cms in out:
                f.write("%s,%d,%s,%s,%s,%d,%d,%s,%.2f,%.2f\n" % (a.machine, rows_n, a.query, name, a.device,
                                                                a.threads, rep, meas, ms, cms))


if __name__ == "__main__":
    main()
