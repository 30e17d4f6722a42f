"""gpu_sanitize_cache.py — gpu_cache's device code under compute-sanitizer.

A table loaded into the GPU cache and into the host cache; every eligible
shape the device pipeline has (whole column: gak_sum/gak_best; filter,
compaction and the exact slices; GROUP BY: dictionary, ids, CUB's sort,
bounds, merge; NULL keys, IN lists, nothing passing; issue 20: gpu_query's
shapes with programs as values (gak_cache_eval), several keys and a
derived one (gak_cache_key_ids), the groups' keys (gak_cache_gather), TEXT
min and max; few groups without the sort) answered on both, and the answers compared bit for bit.  Run under
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
create table t(x real, k integer, y integer, m, d text);
begin;
with recursive s(v) as (select 1 union all select v + 1 from s where v < %d)
insert into t select (v * 2654435761 %% 1000003) * 1e-3 - 500,
  case when v %% 97 = 0 then null else v %% 1000 end, v %% 1000,
  case when v %% 3 = 0 then v else v * 0.25 end,
  case when v %% 89 = 0 then null else '199' || (v %% 7) || '-0' || (v %% 9 + 1) end from s;
update t set x = null where rowid %% 101 = 0;
commit;
""" % rows)
setup.close()
gpu, host = connect("gpu"), connect("cpu")
for con in (gpu, host):
    con.execute("select gpu_cache('t', 'x, k, y, m, d')")
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
QUERIES = [
    "SELECT d, y, sum(x * m + y), total(-x), avg(m / 3), count(*), min(d), max(d) "
    "FROM t WHERE y < 900 GROUP BY d, y",
    "SELECT d, k, sum(x * m + y), max(CASE WHEN y > 500 THEN x END), count(x) FROM t "
    "WHERE d >= '1993' AND y BETWEEN 10 AND 990 GROUP BY d, k",
    "SELECT substr(d, 1, 4) AS yr, sum(coalesce(x, 0) * 2), min(abs(m)), count(*) FROM t "
    "GROUP BY substr(d, 1, 4)",
    "SELECT sum(x * 1e20 + m), total(y % 7), count(*) FROM t WHERE k IN (1, 2, 3, 500)",
    "SELECT d, sum(m) FROM t WHERE y > 5000 GROUP BY d",
    # few groups (cache_gpu_query.c rule 6): counted, no sort, each group's slices over all rows
    "SELECT substr(d, 1, 3) AS dec, sum(x * m), max(y), min(x), count(*) FROM t "
    "WHERE y > 100 GROUP BY substr(d, 1, 3)",
    # few groups, sums only: k_reduce_groups' windows and quads; REAL programs
    # typed over all rows (kernels/cache_expr.cu rule 4), NULLs and x / 0 included
    "SELECT y % 3 AS g3, sum(x), total(x * (1 - x / 1e3)), avg(x / (y - 500)), count(*) "
    "FROM t WHERE y > 10 GROUP BY y % 3",
    # ORDER BY sum() ... LIMIT over many key ids (rule 9; GPUAGG_CACHE_TOPK_IDS
    # below): each group's order key, the top k with ties, their states only
    "SELECT d, y, sum(x) AS s, count(*), max(m) FROM t GROUP BY d, y "
    "ORDER BY s DESC, d, y LIMIT 5",
    "SELECT d, y, total(x * 0.5 + 1) AS s FROM t WHERE k IS NOT NULL GROUP BY d, y "
    "ORDER BY s, d, y LIMIT 3 OFFSET 2",
    # a key that is an expression (rule 8): evaluated first, its own dictionary
    "SELECT k % 7 AS r, d, sum(x), max(m), count(*) FROM t WHERE y < 700 GROUP BY k % 7, d",
    # issue 37 (gmany): a top k by count(*) and count(x) (rule 9, gak_cache_group_count),
    # and many key ids (rule 10, GPUAGG_CACHE_MANY_IDS below) with HAVING
    "SELECT d, y, count(*) AS c, sum(x) FROM t GROUP BY d, y ORDER BY c DESC, d, y LIMIT 5",
    "SELECT d, y, count(x) AS c FROM t WHERE y > 10 GROUP BY d, y ORDER BY c, d, y LIMIT 4",
    "SELECT d, y, sum(x) AS s, count(*) FROM t GROUP BY d, y HAVING sum(x) > 1",
    # issue 37 (d4gpu): compact states (k_many_compact) for y and k (NULLs),
    # refused for m (quarters) in the same query
    "SELECT d, y, sum(y) AS s, total(m), avg(k), count(k) FROM t GROUP BY d, y HAVING sum(y) > 1000",
]
os.environ["GPUAGG_CACHE_TOPK_IDS"] = "50"  # rule 9 at this size
os.environ["GPUAGG_CACHE_MANY_IDS"] = "50"  # rule 10 too (issue 37)
for i, sql in enumerate(QUERIES):
    ans = []
    for con in (gpu, host):
        con.execute("DROP TABLE IF EXISTS temp.q")
        con.execute("CREATE VIRTUAL TABLE temp.q USING gpu_query('%s')" % sql.replace("'", "''"))
        r = con.execute("SELECT * FROM q").fetchall()
        p = json.loads(con.execute("select gpuagg_info()").fetchone()[0])["last_scan"]
        ans.append((sorted(tuple(key(v) for v in row) for row in r), p["path"]))
        if p["path"] != "cache":
            bad.append((sql, p["why"]))
    gpu_answers += ans[0][1] == "cache"
    if ans[0][0] != ans[1][0]:
        bad.append((sql, "GPU and host differ"))
if bad or gpu_answers != len(shapes) + len(QUERIES):
    print("FAIL", bad, "gpu answers", gpu_answers)
    sys.exit(1)
print("ok: GPU cache == host cache for", len(shapes), "shapes and", len(QUERIES), "queries")
