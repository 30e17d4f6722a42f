"""keep_bench.py — a connection per call (issue 40, part 2: cache_keep).

Each call opens a connection, loads gpuagg, loads the columns with
gpu_cache only when gpuagg_info() shows no current entry of the table (the
flow docs/python_node_cli.md gives), runs one gpu_aggregate call and
closes.  Before cache_keep the process's cache went with its last
connection, so every call loaded again; with it, the first call loads and
the others answer from the kept entry.

A/B, interleaved: each repetition runs one process per build (A = the base
build, B = this tree), CALLS calls each; CPU time (getrusage, every thread)
per call, and the loads counter.  Output: a CSV (one row per build, call
index, repetition) and the medians.

    /usr/bin/python3 bench/keep_bench.py A_LIB B_LIB [ROWS] [OUT.csv]

(LIBs without ".so"; ROWS default 2e6; env CALLS=4, REPS=5, DEVICE=cpu:
gpuagg_config('device') of every connection, 'auto' on a GPU machine for
GPU entries.)
"""

import csv
import json
import os
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile

CALLS = int(os.environ.get("CALLS", "4"))
REPS = int(os.environ.get("REPS", "5"))
DEVICE = os.environ.get("DEVICE", "cpu")
COLS = "k, a, b, c"


def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def child(lib, path):
    out = []
    for i in range(CALLS):
        t0 = cpu()
        con = sqlite3.connect(path)
        con.enable_load_extension(True)
        con.load_extension(lib)
        con.enable_load_extension(False)
        con.execute("SELECT gpuagg_config('device', ?)", (DEVICE,)).fetchall()
        info = json.loads(con.execute("SELECT gpuagg_info()").fetchone()[0])
        current = any(e["table"] == "main.t" and e["current"] for e in info["cache"]["entries"])
        if not current:
            con.execute("SELECT gpu_cache('t', '%s')" % COLS).fetchall()
        rows = con.execute("SELECT grp, count, sum FROM gpu_aggregate('t', 'a', NULL, 'k')").fetchall()
        info = json.loads(con.execute("SELECT gpuagg_info()").fetchone()[0])
        con.close()
        out.append({"call": i, "cpu_s": cpu() - t0, "loaded": not current,
                    "path": info["last_scan"]["path"], "loads": info["cache"]["loads"],
                    "groups": len(rows)})
    print(json.dumps(out))


def make_db(path, rows):
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t(k INTEGER, a REAL, b INTEGER, c REAL)")
    con.execute("INSERT INTO t WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s "
                "WHERE i < %d) SELECT i %% 97, i * 0.25, i %% 1000, i * 1.5 FROM s" % rows)
    con.commit()
    con.close()


def main():
    a_lib, b_lib = sys.argv[1], sys.argv[2]
    rows = int(float(sys.argv[3])) if len(sys.argv) > 3 else 2000000
    out_csv = sys.argv[4] if len(sys.argv) > 4 else None
    tmp = tempfile.mkdtemp(prefix="gpuagg_keepb_")
    path = os.path.join(tmp, "k.db")
    make_db(path, rows)
    recs = []
    for rep in range(REPS):
        for build, lib in (("A", a_lib), ("B", b_lib)):
            r = subprocess.run([sys.executable, os.path.abspath(__file__), "child", lib, path],
                               capture_output=True, text=True, check=True)
            for c in json.loads(r.stdout.strip().splitlines()[-1]):
                recs.append(dict(c, build=build, rep=rep, rows=rows))
    if out_csv:
        with open(out_csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=["build", "rep", "rows", "call", "cpu_s", "loaded",
                                              "path", "loads", "groups"])
            w.writeheader()
            for r in recs:
                w.writerow(r)
    for build in ("A", "B"):
        first = [r["cpu_s"] for r in recs if r["build"] == build and r["call"] == 0]
        later = [r["cpu_s"] for r in recs if r["build"] == build and r["call"] > 0]
        loads = sum(r["loaded"] for r in recs if r["build"] == build) / REPS
        print("%s: first call %.3f s CPU, later calls %.4f s CPU (medians), loads per process %.1f"
              % (build, statistics.median(first), statistics.median(later), loads))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "child":
        child(sys.argv[2], sys.argv[3])
    else:
        main()
