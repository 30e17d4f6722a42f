#!/usr/bin/python3
"""d2_ab.py — d2 of bench/query_bench.py through gpu_query (threads = 2),
4 calls on one connection, for one build; run it for two builds in turn,
several rounds, to compare them side by side with no other mode between
(bench/RESULTS.md §15).

  bench/d2_ab.py LIB [DB]     LIB: the extension without .so; DB: the
                              6e6-row file of query_bench.py (default
                              /tmp/gpuagg_query_bench/lineitem_6000000.db)

Prints LIB, the 4 calls' wall times in ms, and last_scan of the last call
(the work done: pieces, hash flushes, direct batches)."""
import json
import sqlite3
import sys
import time

lib = sys.argv[1]
db = sys.argv[2] if len(sys.argv) > 2 else "/tmp/gpuagg_query_bench/lineitem_6000000.db"
con = sqlite3.connect(db)
con.enable_load_extension(True)
con.load_extension(lib)
con.execute("SELECT gpuagg_config('threads', 2)")
sql = ("SELECT l_suppkey, l_shipmode, l_returnflag, sum(l_extendedprice * (1 - l_discount)) AS revenue, "
       "sum(l_quantity) AS qty, max(l_discount) AS max_disc, count(*) AS lines FROM lineitem "
       "WHERE l_shipdate >= ?1 AND l_shipdate < ?2 GROUP BY l_suppkey, l_shipmode, l_returnflag "
       "ORDER BY revenue DESC, l_suppkey, l_shipmode, l_returnflag LIMIT 10")
con.execute("CREATE VIRTUAL TABLE temp.d2 USING gpu_query('%s')" % sql.replace("'", "''"))
ts = []
for _ in range(4):
    t = time.time()
    con.execute("SELECT * FROM d2('1993-01-01', '1997-01-01')").fetchall()
    ts.append(time.time() - t)
ls = json.loads(con.execute("SELECT gpuagg_info()").fetchone()[0])["last_scan"]
print(lib, ["%.0f" % (x * 1000) for x in ts], {k: ls[k] for k in ls if k != "why"})
