#!/usr/bin/python3
"""A/B of the compact group states (issue 37, d4gpu; engine/cache/
cache_gpu_many.c rule 5) on the fake GPU backend: d4 of bench/query_bench.py
(sum(l_quantity) by l_partkey over 1995, HAVING > 60) from a GPU entry with
GPUAGG_CACHE_MANY_COMPACT=0 (every group's exact states, as before) and =1,
interleaved in one process, CPU time (getrusage: the fake's device work is
host threads of this process) and wall, medians.

  GPUAGG_LIB=build/fake/libgpuagg bench/many_compact_ab.py [--rows 2e6]
      [--reps 5] [--csv FILE]

The fake backend runs the device's work on the CPU, so this measures the
host side (what comes back, 700 against 32 bytes a group, and the states
made from it), not the GPU: bench/dashboard_session.sh cachebench does."""
import argparse
import json
import os
import resource
import sqlite3
import statistics
import time

ap = argparse.ArgumentParser()
ap.add_argument("--rows", type=float, default=2e6)
ap.add_argument("--reps", type=int, default=5)
ap.add_argument("--csv")
a = ap.parse_args()
n = int(a.rows)
lib = os.environ.get("GPUAGG_LIB", "build/fake/libgpuagg")
os.environ.setdefault("GPUAGG_CACHE_MANY_IDS", "1000")  # d4's rows/30 groups are many here
con = sqlite3.connect(":memory:", isolation_level=None)
con.enable_load_extension(True)
con.load_extension(lib)
con.execute("SELECT gpuagg_config('device', 'gpu')")
con.execute("CREATE TABLE lineitem(l_partkey INTEGER, l_quantity REAL, l_shipdate TEXT)")
con.execute("WITH RECURSIVE s(v) AS (SELECT 1 UNION ALL SELECT v + 1 FROM s WHERE v < %d) "
            "INSERT INTO lineitem SELECT (v * 2654435761) %% %d, (v * 40503 %% 50) + 1.0, "
            "'199' || (2 + v %% 7) || '-0' || (1 + v %% 9) || '-15' FROM s" % (n, n // 30))
con.execute("SELECT gpu_cache('lineitem', 'l_partkey, l_quantity, l_shipdate')")
D4 = ("SELECT l_partkey, sum(l_quantity) AS q FROM lineitem WHERE l_shipdate BETWEEN '1995-01-01' "
      "AND '1995-12-31' GROUP BY l_partkey HAVING sum(l_quantity) > 60")
con.execute("CREATE VIRTUAL TABLE temp.q USING gpu_query('%s')" % D4.replace("'", "''"))


def once(compact):
    os.environ["GPUAGG_CACHE_MANY_COMPACT"] = compact
    c0, w0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    rows = con.execute("SELECT * FROM q").fetchall()
    w1, c1 = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
    info = json.loads(con.execute("SELECT gpuagg_info()").fetchone()[0])
    assert info["last_scan"]["path"] == "cache", info["last_scan"]
    cpu = (c1.ru_utime + c1.ru_stime) - (c0.ru_utime + c0.ru_stime)
    return cpu * 1e3, (w1 - w0) * 1e3, sorted(rows), info["cache"]


res = {"0": [], "1": []}
answers = {}
for rep in range(a.reps + 1):
    for mode in ("0", "1") if rep % 2 else ("1", "0"):
        cpu, wall, rows, cinfo = once(mode)
        answers.setdefault(mode, rows)
        assert rows == answers[mode]
        if rep:  # the first is a warm-up
            res[mode].append((cpu, wall))
assert answers["0"] == answers["1"], "compact and exact answers differ"
ngroups = len(answers["1"])
out = []
for mode, name in (("0", "exact_states"), ("1", "compact_states")):
    cpu = statistics.median(c for c, _ in res[mode])
    wall = statistics.median(w for _, w in res[mode])
    out.append((name, n, ngroups, a.reps, round(cpu, 1), round(wall, 1)))
    print("%-15s rows %d kept groups %d: cpu %.1f ms, wall %.1f ms (medians of %d)"
          % (name, n, ngroups, cpu, wall, a.reps))
print("values_compact %d, values_compact_no %d" % (cinfo["values_compact"], cinfo["values_compact_no"]))
if a.csv:
    with open(a.csv, "w") as f:
        f.write("mode,rows,kept_groups,reps,cpu_ms_median,wall_ms_median,machine,backend\n")
        for o in out:
            f.write("%s,%d,%d,%d,%s,%s,vm2,fake_gpu\n" % o)
