#!/usr/bin/python3
"""gpuagg.dask's benchmark (issue 21): one query over many SQLite files.

  bench/dask_bench.py [--files 16] [--rows 1e6] [--dir DIR] [--reps 5]
                      [--workers 2] [--queries q1,d1,d3,d2] [--csv FILE]
                      [--machine NAME]

The rows: bench/lineitem.py's table of files x rows rows in DIR (the
"merged" database), cut by rowid into `files` shard files of `rows` rows
each (same CREATE TABLE), made once and kept.  Queries: bench/query_bench.py's
(TPC-H Q1, the dashboards d1..d3; d2 has rows/600 * 21 groups a file: what
a many-group merge costs), parameters for the merged row count.

Modes, each rep runs every one (the first rep warms the page cache and is
not recorded):
  sqlite     SQLite's own text over the merged database (the baseline)
  merged     gpu_query over the merged database, every core
  sequential one process, the shards in turn: gpu_query_partial on each
             (every core), then gpu_query_merge of them all and gpu_query's
             gpuagg_partial column: scan_ms and merge_ms apart
  sequential_t1  the same on one thread (what one worker of the cluster
             does alone: the scaling's base)
  dask       gpuagg.dask (build, compute, finish: what query() runs) on a
             LocalCluster of --workers processes of one thread each
             (gpuagg threads 1 a task); merge_ms: the merge tasks' compute
             time (the task stream) plus the client's finish; scan_ms: the
             file tasks' compute time, summed over the workers
Every gpuagg mode must give the same rows (repr); SQLite's own text rounds
its sums its own way and is not compared.

CSV columns: date, machine, query, mode, rep, ms, scan_ms, merge_ms, files,
rows, groups, partial_bytes (one file's partial, the largest).
"""
import argparse
import csv
import json
import logging
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from query_bench import QUERIES  # noqa: E402

LIB = os.environ.get("GPUAGG_LIB") or os.path.join(ROOT, "libgpuagg")


def connect(path, ro=False):
    import sqlite3
    con = sqlite3.connect("file:%s%s" % (path, "?mode=ro" if ro else ""), uri=True, isolation_level=None)
    con.enable_load_extension(True)
    con.load_extension(LIB)
    return con


def make_shards(merged, d, files, rows):
    import sqlite3
    os.makedirs(d, exist_ok=True)
    src = sqlite3.connect(merged)
    ddl = src.execute("SELECT sql FROM sqlite_schema WHERE name = 'lineitem'").fetchone()[0]
    src.close()
    out = []
    for k in range(files):
        path = os.path.join(d, "part_%02d.db" % k)
        out.append(path)
        if os.path.exists(path):
            con = sqlite3.connect(path)
            n = con.execute("SELECT count(*) FROM lineitem").fetchone()[0]
            con.close()
            if n == rows:
                continue
            os.remove(path)
        con = sqlite3.connect(path + ".tmp", isolation_level=None)
        con.execute(ddl)
        con.execute("ATTACH ? AS m", (merged,))
        con.execute("INSERT INTO main.lineitem SELECT * FROM m.lineitem WHERE rowid > ? AND rowid <= ?",
                    (k * rows, (k + 1) * rows))
        con.execute("DETACH m")
        con.close()
        os.replace(path + ".tmp", path)
    return out


def install_package(dest):
    """gpuagg as the wheel lays it out, for the cluster's workers."""
    import shutil
    pkg = os.path.join(dest, "gpuagg")
    if os.path.exists(dest):
        shutil.rmtree(dest)
    os.makedirs(pkg)
    src = os.path.join(ROOT, "pkg", "python", "gpuagg")
    text = open(os.path.join(src, "__init__.py.in")).read().replace("@VERSION@", "0+bench")
    open(os.path.join(pkg, "__init__.py"), "w").write(text.replace("@KIND@", "bench build"))
    shutil.copy(os.path.join(src, "dask.py"), pkg)
    shutil.copy(LIB + ".so", os.path.join(pkg, "libgpuagg.so"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=16)
    ap.add_argument("--rows", type=float, default=1e6)
    ap.add_argument("--dir", default="/tmp/gpuagg_dask_bench")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--queries", default="q1,d1,d3,d2")
    ap.add_argument("--modes", default="sqlite,merged,sequential,dask")
    ap.add_argument("--csv")
    ap.add_argument("--machine", default=os.uname().nodename)
    a = ap.parse_args()
    rows, files = int(a.rows), a.files
    total = rows * files
    os.makedirs(a.dir, exist_ok=True)
    merged = os.path.join(a.dir, "lineitem_%d.db" % total)
    subprocess.run([sys.executable, os.path.join(HERE, "lineitem.py"), "--rows", str(total), "--db", merged],
                   check=True)
    shards = make_shards(merged, os.path.join(a.dir, "shards_%dx%d" % (files, rows)), files, rows)
    pkg = os.path.join(ROOT, "build", "bench_pkg")
    install_package(pkg)
    os.environ["PYTHONPATH"] = pkg + os.pathsep + os.environ.get("PYTHONPATH", "")
    sys.path.insert(0, pkg)
    import gpuagg.dask as gd
    modes = a.modes.split(",")
    client = cluster = None
    if "dask" in modes:
        from distributed import Client, LocalCluster
        cluster = LocalCluster(n_workers=a.workers, threads_per_worker=1, processes=True,
                               host="127.0.0.1", dashboard_address=None, silence_logs=logging.ERROR)
        client = Client(cluster)
    out = open(a.csv, "a", newline="") if a.csv else None
    w = csv.writer(out) if out else None
    if out and out.tell() == 0:
        w.writerow(["date", "machine", "query", "mode", "rep", "ms", "scan_ms", "merge_ms", "files", "rows",
                    "groups", "partial_bytes"])
    date = time.strftime("%Y-%m-%d")
    print("# %d files x %d rows (%s), %d CPUs, modes %s" % (files, rows, a.dir, os.cpu_count(), a.modes))
    for qn in a.queries.split(","):
        sql, pf = QUERIES[qn]
        params = tuple(pf(total))
        times = {m: [] for m in modes}
        extra = {m: [] for m in modes}
        answers = {}
        groups = pbytes = 0
        for rep in range(a.reps + 1):
            for mode in modes:
                scan_ms = merge_ms = None
                t0 = time.perf_counter()
                if mode == "sqlite":
                    con = connect(merged, ro=True)
                    got = con.execute(sql, params).fetchall()
                    con.close()
                elif mode == "merged":
                    con = connect(merged, ro=True)
                    con.execute("CREATE VIRTUAL TABLE temp.q USING gpu_query('%s')" % sql.replace("'", "''"))
                    got = con.execute("SELECT * FROM temp.q(%s)" % ",".join("?" * len(params)), params).fetchall()
                    con.close()
                elif mode in ("sequential", "sequential_t1"):
                    parts = []
                    for p in shards:
                        con = connect(p, ro=True)
                        if mode == "sequential_t1":
                            con.execute("SELECT gpuagg_config('threads', 1)")
                        parts.append(con.execute("SELECT gpu_query_partial(?%s)" % (",?" * len(params)),
                                                 (sql,) + params).fetchone()[0])
                        con.close()
                    t1 = time.perf_counter()
                    m = connect(":memory:")
                    blob = m.execute("SELECT gpu_query_merge(%s)" % ",".join("?" * len(parts)), parts).fetchone()[0]
                    info = json.loads(m.execute("SELECT gpu_query_partial_info(?)", (blob,)).fetchone()[0])
                    m.close()
                    got, _ = gd.finish(blob, sql, params)
                    t2 = time.perf_counter()
                    scan_ms, merge_ms = (t1 - t0) * 1e3, (t2 - t1) * 1e3
                    groups, pbytes = info["groups"], max(len(p) for p in parts)
                else:
                    from distributed import get_task_stream
                    with get_task_stream(client) as ts:
                        graph, _ = gd.build(client, shards, sql, params, threads=1)
                        item = client.compute(graph, optimize_graph=False).result()
                    t1 = time.perf_counter()
                    got, _ = gd.finish(item[2], sql, params)
                    t2 = time.perf_counter()

                    def busy(prefix, data=ts.data):
                        return 1e3 * sum(s["stop"] - s["start"] for t in data if prefix in str(t["key"])
                                         for s in t["startstops"] if s["action"] == "compute")
                    scan_ms = busy("gpuagg-file-")
                    merge_ms = busy("gpuagg-merge-") + (t2 - t1) * 1e3
                ms = (time.perf_counter() - t0) * 1e3
                if mode != "sqlite":
                    answers.setdefault(mode, repr(got))
                    if answers[mode] != repr(got):
                        sys.exit("dask_bench: %s %s: the answer changed between reps" % (qn, mode))
                if rep == 0:
                    continue
                times[mode].append(ms)
                extra[mode].append((scan_ms, merge_ms))
                if w:
                    w.writerow([date, a.machine, qn, mode, rep, "%.1f" % ms,
                                "" if scan_ms is None else "%.1f" % scan_ms,
                                "" if merge_ms is None else "%.1f" % merge_ms, files, total, groups, pbytes])
                    out.flush()
        ref = set(answers.values())
        if len(ref) > 1:
            sys.exit("dask_bench: %s: the gpuagg modes disagree" % qn)
        base = statistics.median(times["sqlite"]) if "sqlite" in times else None
        line = []
        for mode in modes:
            med = statistics.median(times[mode])
            s = "%s %.0f ms" % (mode, med)
            if base and mode != "sqlite":
                s += " (%.2fx SQLite)" % (base / med)
            ex = [e for e in extra[mode] if e[1] is not None]
            if ex:
                mm = statistics.median(e[1] for e in ex)
                s += ", merge %.1f ms = %.1f%%" % (mm, 100 * mm / med)
            line.append(s)
        print("%s (%d groups, largest partial %d bytes): %s" % (qn, groups, pbytes, "; ".join(line)))
        sys.stdout.flush()
    if client:
        client.close()
        cluster.close()


if __name__ == "__main__":
    main()
