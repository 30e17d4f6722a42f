#!/usr/bin/python3
"""The key memo's A/B (issue 37, session 3): group terms over one date
column through gpu_query's parallel path, a base build against this one,
on CPU time and on malloc() calls a row.

  bench/keymemo_bench.py [--rows 2e6] [--reps 5] [--threads 2]
                         [--base-lib /work/base3/libgpuagg] [--lib ./libgpuagg]
                         [--db DIR] [--csv FILE] [--machine NAME]
                         [--queries strftime,substr_date,substr]

The table: t(d TEXT, a REAL), d an ISO date 'YYYY-MM-DD' (1,096 distinct
days over three years, in a scrambled order), a file DIR/keymemo_<rows>.db
made once and kept.  Queries (QUERIES below): the monthly trend as
analysts write it, strftime('%Y-%m', d); the nested form
substr(date(d), 1, 7); and substr(d, 1, 7) as the control (no allocation
a row in either build).  Also, when named: date (date(d), 1,096 groups,
no allocation a row either) and weekday (the weekday/weekend CASE over
strftime('%w', d)).

Each measurement is a child process that loads one build, creates the
gpu_query table, runs it once (the pool's connections open, the pages are
warm) and then times one run: CPU time of the whole process (every worker
thread: resource.getrusage) and wall time.  Builds and queries are
interleaved rep by rep, so a busy machine slows both alike; medians of the
reps.  The mode `sqlite` is SQLite's own text (with gpu_sum) on one thread,
for scale.  One more child per (build, query) runs under LD_PRELOAD of
bench/malloc_count.c (compiled to a temporary file) and counts malloc()
calls over the timed run: each is one take of SQLite's global allocator
mutex, on which 16 workers serialise.  last_scan.key_memo is recorded.
"""
import argparse
import csv
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
QUERIES = {
    "strftime": "SELECT strftime('%Y-%m', d) AS month, sum(a), count(*) FROM t GROUP BY month ORDER BY month",
    "substr_date": "SELECT substr(date(d), 1, 7) AS month, sum(a), count(*) FROM t GROUP BY month ORDER BY month",
    "substr": "SELECT substr(d, 1, 7) AS month, sum(a), count(*) FROM t GROUP BY month ORDER BY month",
    # not in the default set: terms SQLite evaluates without an allocation,
    # where the memo saves only the evaluation
    "date": "SELECT date(d) AS day, sum(a), count(*) FROM t GROUP BY day ORDER BY day",
    "weekday": "SELECT CASE WHEN strftime('%w', d) IN ('0', '6') THEN 'weekend' ELSE 'weekday' END AS k, "
               "sum(a), count(*) FROM t GROUP BY k ORDER BY k",
}

CHILD = r"""
import ctypes, json, os, resource, sqlite3, sys, time
lib, path, threads, mode, sql = sys.argv[1:6]
mc = ctypes.CDLL(os.environ["MC_SO"]).mc_count if os.environ.get("MC_SO") else None
c = sqlite3.connect(path, isolation_level=None)
c.enable_load_extension(True)
c.load_extension(lib)
c.execute("SELECT gpuagg_config('threads', ?)", (int(threads),))
if mode == "sqlite":
    run = sql.replace("sum(", "gpu_sum(")
else:
    c.execute("CREATE VIRTUAL TABLE temp.q USING gpu_query('%s')" % sql.replace("'", "''"))
    run = "SELECT * FROM temp.q"
c.execute(run).fetchall()
ru0, w0, m0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter(), mc() if mc else 0
rows = c.execute(run).fetchall()
w1, ru1, m1 = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF), mc() if mc else 0
ls = json.loads(c.execute("SELECT gpuagg_info()").fetchone()[0])["last_scan"]
print(json.dumps({"cpu": ru1.ru_utime + ru1.ru_stime - ru0.ru_utime - ru0.ru_stime, "wall": w1 - w0,
                  "mallocs": m1 - m0, "groups": len(rows), "path": ls.get("path"),
                  "key_memo": ls.get("key_memo"), "answer": repr(rows)}))
"""


def make_db(path, n):
    import sqlite3
    c = sqlite3.connect(path, isolation_level=None)
    c.execute("CREATE TABLE t(d TEXT, a REAL)")
    base = 2459580.5  # 2022-01-01
    c.execute("BEGIN")
    c.executemany("INSERT INTO t VALUES (date(?), ?)",
                  ((base + (i * 7919) % 1096, (i % 1000) * 0.25) for i in range(n)))
    c.execute("COMMIT")
    c.close()


def child(lib, path, threads, mode, sql, mc_so=None):
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    if mc_so:
        env["LD_PRELOAD"] = mc_so
        env["MC_SO"] = mc_so
    out = subprocess.run([sys.executable, "-c", CHILD, lib, path, str(threads), mode, sql],
                         capture_output=True, text=True, env=env, timeout=600)
    if out.returncode:
        raise SystemExit("child failed: %s" % out.stderr[-2000:])
    return json.loads(out.stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=float, default=2e6)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--base-lib", default="/work/base3/libgpuagg")
    ap.add_argument("--lib", default=os.path.join(ROOT, "libgpuagg"))
    ap.add_argument("--db", default=tempfile.gettempdir())
    ap.add_argument("--csv")
    ap.add_argument("--machine", default="vm2")
    ap.add_argument("--queries", default="strftime,substr_date,substr")
    a = ap.parse_args()
    n = int(a.rows)
    path = os.path.join(a.db, "keymemo_%d.db" % n)
    if not os.path.exists(path):
        make_db(path, n)
    with open(path, "rb") as f:  # the page cache, warm
        while f.read(1 << 24):
            pass
    mc_so = os.path.join(tempfile.gettempdir(), "gpuagg_malloc_count.so")
    subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-o", mc_so, os.path.join(HERE, "malloc_count.c"), "-ldl"],
                   check=True)
    builds = [("base", a.base_lib), ("new", a.lib)]
    queries = a.queries.split(",")
    res = {}
    for rep in range(a.reps):
        for q in queries:
            for name, lib in builds + [("sqlite", a.lib)]:
                if name == "sqlite" and rep >= 3:
                    continue  # scale only
                r = child(lib, path, a.threads, "sqlite" if name == "sqlite" else "gpu_query", QUERIES[q])
                res.setdefault((q, name), []).append(r)
                print("rep %d %-12s %-6s cpu %.3f s wall %.3f s path %s key_memo %s" % (
                    rep, q, name, r["cpu"], r["wall"], r["path"], r["key_memo"]), flush=True)
    rows_out = []
    for q in queries:
        ans = {name: res[(q, name)][0]["answer"] for name in ("base", "new", "sqlite")}
        same = ans["base"] == ans["new"] == ans["sqlite"]
        for name, lib in builds + [("sqlite", a.lib)]:
            rs = res[(q, name)]
            m = child(lib, path, a.threads, "sqlite" if name == "sqlite" else "gpu_query", QUERIES[q], mc_so)
            cpu = statistics.median(r["cpu"] for r in rs)
            wall = statistics.median(r["wall"] for r in rs)
            km = m.get("key_memo") or {}
            rows_out.append({"machine": a.machine, "date": time.strftime("%Y-%m-%d"), "rows": n,
                             "threads": a.threads if name != "sqlite" else 1, "query": q, "build": name,
                             "reps": len(rs), "cpu_s_median": "%.4f" % cpu,
                             "cpu_ns_per_row": "%.1f" % (cpu / n * 1e9), "wall_s_median": "%.4f" % wall,
                             "mallocs_per_row": "%.4f" % (m["mallocs"] / n), "path": m["path"],
                             "memo_terms": km.get("terms", ""), "memo_hits": km.get("hits", ""),
                             "memo_misses": km.get("misses", ""), "same_answer": int(same)})
            print("%-12s %-6s cpu median %.3f s (%.1f ns/row), wall %.3f s, mallocs/row %.4f, same %s" % (
                q, name, cpu, cpu / n * 1e9, wall, m["mallocs"] / n, same), flush=True)
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows_out[0]))
            w.writeheader()
            w.writerows(rows_out)


if __name__ == "__main__":
    main()
