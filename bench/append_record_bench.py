#!/usr/bin/env python3
"""append_record_bench.py -- what the appends' page record adds to a load
(issue 40 part 4, planner/cache_extend.c rule 2): gpu_cache of TPC-H Q1's
seven columns from a WAL database with a committed frame (so the record is
made), builds interleaved, CPU and wall medians.

  /usr/bin/python3 bench/append_record_bench.py LIB [LIB ...]
  (DB: the lineitem WAL file bench/cache_append_bench.py makes,
   /tmp/gpuagg_append_bench/lineitem.db; REPS=3)
"""
import os, sqlite3, sys, resource, time, statistics
def cpu(): r = resource.getrusage(resource.RUSAGE_SELF); return r.ru_utime + r.ru_stime
res = {}
libs = sys.argv[1:]
for rep in range(int(os.environ.get("REPS", "3"))):
    for lib in libs:
        con = sqlite3.connect(os.environ.get("DB", "/tmp/gpuagg_append_bench/lineitem.db"))
        con.enable_load_extension(True); con.load_extension(lib)
        con.execute("SELECT gpuagg_config('device','cpu'), gpuagg_config('threads', 2)").fetchall()
        con.execute("PRAGMA user_version = %d" % (rep + 7))
        t0 = cpu(); w0 = time.perf_counter()
        con.execute("SELECT gpu_cache('lineitem', 'l_quantity, l_extendedprice, l_discount, l_tax, l_returnflag, l_linestatus, l_shipdate')").fetchall()
        import json
        e = json.loads(con.execute("SELECT gpuagg_info()").fetchone()[0])["cache"]["entries"]
        if rep == 0: print(lib, e[0].get("how"), e[0].get("appends"))
        res.setdefault(lib, []).append(((cpu() - t0) * 1e3, (time.perf_counter() - w0) * 1e3))
        con.close()
for lib in libs:
    print(lib, "cpu ms %.0f wall ms %.0f" % (statistics.median(x[0] for x in res[lib]), statistics.median(x[1] for x in res[lib])))
