"""gpu_sanitize.py — a small GPU workload for compute-sanitizer.

Every aggregate and gpu_matadd, forced onto the GPU with small chunks and
several streams, checked against the CPU path.  Run under
`compute-sanitizer --tool memcheck|racecheck|synccheck --error-exitcode 1`.
"""
import os
import sqlite3
import sys

lib = os.environ.get("GPUAGG_LIB", os.path.abspath("libgpuagg"))
con = sqlite3.connect(":memory:")
con.enable_load_extension(True)
con.load_extension(lib)
con.executescript("""
create table t(i integer, r real, m);
with recursive s(v) as (select 1 union all select v + 1 from s where v < 200000)
insert into t select v * 7919 % 100003 - 50000, (v * 2654435761 % 1000003) * 1e-3,
  case when v % 3 = 0 then v else v * 0.25 end from s;
create table a(i, j, v); create table b(i, j, v);
with recursive s(v) as (select 0 union all select v + 1 from s where v < 40000)
insert into a select v / 200, v % 200, v * 0.5 from s;
insert into b select i, j, v * 3 from a where (i + j) % 2 = 0;
""")
qs = ["gpu_sum(i)", "gpu_sum(r)", "gpu_sum(m)", "gpu_max(m)", "gpu_min(r)",
      "gpu_avg(m)", "gpu_total(r)"]
mat = "select group_concat(printf('%d,%d,%!.17g', i, j, v)) from gpu_matadd('a', 'b')"

def run(device):
    con.execute("select gpuagg_config('device', ?)", (device,))
    con.execute("select gpuagg_config('cpu_max_rows', 0)")
    con.execute("select gpuagg_config('chunk_bytes', 65536)")
    con.execute("select gpuagg_config('streams', 4)")
    row = con.execute("select " + ", ".join(qs) + " from t").fetchone()
    return list(row) + [con.execute(mat).fetchone()[0]]

cpu, gpu = run("cpu"), run("gpu")
import json
info = json.loads(con.execute("select gpuagg_info()").fetchone()[0])
bad = [q for q, x, y in zip(qs + ["matadd"], cpu, gpu) if repr(x) != repr(y)]
print("last path:", info["last"]["path"], "chunks_gpu:", info["counters"]["chunks_gpu"])
if bad or info["counters"]["chunks_gpu"] == 0:
    print("FAIL", bad)
    sys.exit(1)
print("ok: GPU == CPU for", len(cpu), "queries")
