"""gpu_sanitize_cache.py — gpu_cache's device code under compute-sanitizer.

A table loaded into the GPU cache and into the host cache; every eligible
shape the device pipeline has (whole column: gak_sum/gak_best; filter,
compaction and the exact slices; GROUP BY: dictionary, ids, CUB's sort,
bounds, merge; NULL keys, IN lists, nothing passing) answered on both, and
the answers compared bit for bit.  Run under
`compute-sanitizer --tool memcheck|racecheck|synccheck --error-exitcode 9`;
exits 1 on a difference or when the GPU answered nothing.
"""
import json
import os
import sqlite3
import struct
import sys
import tempfile

lib = os.environ.get("GPUAGG_LIB", os.path.abspath("libgpuagg"))
rows = int(os.environ.get("GPUAGG_SANITIZE_ROWS", "300000"))
path = os.path.join(tempfile.mkdtemp(prefix="gpuagg_san_"), "s.db")


def connect(device):
    con = sqlite3.connect(path, isolation_level=None)
    con.enable_load_extension(True)
    con.load_extension(lib)
    con.execute("select gpuagg_config('device', ?)", (device,))
    con.execute("select gpuagg_config('scan_min_rows', 0)")
    return con


setup = sqlite3.connect(path, isolation_level=None)
setup.executescript("""
create table t(x real, k integer, y integer, m);
begin;
with recursive s(v) as (select 1 union all select v + 1 from s where v < %d)
insert into t select (v * 2654435761 %% 1000003) * 1e-3 - 500,
  case when v %% 97 = 0 then null else v %% 1000 end, v %% 1000,
  case when v %% 3 = 0 then v else v * 0.25 end from s;
update t set x = null where rowid %% 101 = 0;
commit;
""" % rows)
setup.close()
gpu, host = connect("gpu"), connect("cpu")
for con in (gpu, host):
    con.execute("select gpu_cache('t', 'x, k, y, m')")
where = json.loads(gpu.execute("select gpuagg_info()").fetchone()[0])["cache"]["entries"][0]["where"]
if where != "gpu":
    print("FAIL: the entry is in %s memory, not on the GPU" % where)
    sys.exit(1)
shapes = [("m", None, None), ("y", None, None), ("x", None, None), ("x", "y > 500", None),
          ("x", "y > 500", "k"), ("m", "k IN (1, 2, 3, 500) AND x IS NOT NULL", "y"),
          ("y", "x BETWEEN -100 AND 100", "k"), ("x", "y > 5000", None), ("x", "y > 5000", "k"),
          ("m", "k IS NULL", "k")]


def key(v):
    return ("r", struct.pack("<d", v)) if isinstance(v, float) else (type(v).__name__, v)


bad, gpu_answers = [], 0
for x, f, g in shapes:
    ans = []
    for con in (gpu, host):
        r = con.execute("select grp, rows, count, sum, total, avg, min, max from "
                        "gpu_aggregate('t', ?, ?, ?)", (x, f, g)).fetchall()
        p = json.loads(con.execute("select gpuagg_info()").fetchone()[0])["last_scan"]["path"]
        ans.append((sorted(tuple(key(v) for v in row) for row in r), p))
    gpu_answers += ans[0][1] == "cache"
    if ans[0] != ans[1]:
        bad.append((x, f, g, ans[0][1], ans[1][1]))
if bad or gpu_answers != len(shapes):
    print("FAIL", bad, "gpu answers", gpu_answers)
    sys.exit(1)
print("ok: GPU cache == host cache for", len(shapes), "shapes")
