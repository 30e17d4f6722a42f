#!/usr/bin/python3
"""One query of bench/query_bench.py answered from a GPU cache entry, with
GPUAGG_CACHE_PROFILE=1 (each step's wall time on stderr): where a cached
query's time goes (issue 20).

  GPUAGG_CACHE_PROFILE=1 bench/cache_profile.py [--rows 6e7] [--query q1] [--reps 3]

--query names one of query_bench.py's queries or of dashboard_bench.py's
lineitem set (l_distinct, l_month).
"""
import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_db  # noqa: E402
import lineitem  # noqa: E402
from dashboard_bench import LINEITEM, LINEITEM_CACHE  # noqa: E402
from query_bench import CACHE_COLS, LIB, QUERIES  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--rows", default="6e7")
ap.add_argument("--query", default="q1")
ap.add_argument("--reps", type=int, default=3)
ap.add_argument("--db", default="/tmp/gpuagg_query_bench")
a = ap.parse_args()
n = int(float(a.rows))
os.makedirs(a.db, exist_ok=True)
path = os.path.join(a.db, "lineitem_%d.db" % n)
lineitem.make(path, n)
con = bench_db.connect(path, LIB)
if a.query in LINEITEM:  # the dashboard set's lineitem queries (issue 37)
    CACHE_COLS, sql, params = LINEITEM_CACHE, LINEITEM[a.query][0], ()
else:
    sql, params = QUERIES[a.query][0], QUERIES[a.query][1](n)
con.execute("SELECT gpu_cache('lineitem', ?)", (CACHE_COLS,)).fetchall()
con.execute("CREATE VIRTUAL TABLE temp.q USING gpu_query('%s')" % sql.replace("'", "''"))
for rep in range(a.reps):
    t0 = time.perf_counter()
    con.execute("SELECT * FROM q(%s)" % ", ".join("?" * len(params)), params).fetchall()
    print("# %s rep %d: %.3f ms" % (a.query, rep, (time.perf_counter() - t0) * 1e3),
          file=sys.stderr, flush=True)
