#!/usr/bin/python3
"""The first cached query of a new process (issue 40, part 3): from a cache
file, against a load from rows and against the warm query.

  bench/cache_file_bench.py [--rows 6e6] [--db FILE] [--dir DIR] [--reps 5]
                            [--device cpu] [--base-lib LIB] [--csv FILE]

Each measurement is a new process (/usr/bin/python3) that opens the
database, sets device, runs gpu_cache('lineitem', <Q1's 7 columns>), then
TPC-H Q1 through gpu_query once (the first query), then 5 more times (the
warm query, their median).  Modes, interleaved rep by rep:
  rows       this build, cache_file off: gpu_cache loads from rows
  rows_base  --base-lib (the build before cache files), the same
  file       this build, cache_file on: gpu_cache maps the file a writer
             process made before the reps (the page cache warm)
  file_cold  the same after posix_fadvise(DONTNEED) on the file (its pages
             leave the page cache: the map reads the disk)
The file's read time is measured apart: a read() of the whole file, warm and
after DONTNEED (cold).  Goal (docs/gpu_cache.md): new process's first query
(gpu_cache + Q1) <= 3 x warm Q1 + the file's read time.  The database is a
rollback-journal file (bench/lineitem.py): a WAL database whose WAL was
checkpointed away always reloads.  The cache file goes to --dir (cache_dir),
never beside a database it did not make.  Wall and CPU (the child's
getrusage) times in ms; medians of --reps.
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
LIB = os.environ.get("GPUAGG_LIB") or os.path.join(os.path.dirname(HERE), "libgpuagg")
PY = "/usr/bin/python3"
COLS = "l_returnflag, l_linestatus, l_quantity, l_extendedprice, l_discount, l_tax, l_shipdate"
Q1 = ("SELECT l_returnflag, l_linestatus, sum(l_quantity) AS sum_qty, "
      "sum(l_extendedprice) AS sum_base_price, "
      "sum(l_extendedprice * (1 - l_discount)) AS sum_disc_price, "
      "sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) AS sum_charge, "
      "avg(l_quantity) AS avg_qty, avg(l_extendedprice) AS avg_price, "
      "avg(l_discount) AS avg_disc, count(*) AS count_order "
      "FROM lineitem WHERE l_shipdate <= ''1998-09-02'' "
      "GROUP BY l_returnflag, l_linestatus ORDER BY l_returnflag, l_linestatus")

CHILD = r"""
import json, resource, sqlite3, sys, time
lib, db, device, cfile, cdir, cols, q1 = sys.argv[1:8]
t0 = time.perf_counter()
con = sqlite3.connect(db, isolation_level=None)
con.enable_load_extension(True)
con.load_extension(lib)
con.execute("select gpuagg_config('device', ?)", (device,))
if cfile == "on":
    con.execute("select gpuagg_config('cache_file', 'on')")
    con.execute("select gpuagg_config('cache_dir', ?)", (cdir,))
t1 = time.perf_counter()
con.execute("select gpu_cache('lineitem', ?)", (cols,)).fetchall()
t2 = time.perf_counter()
con.execute("CREATE VIRTUAL TABLE temp.q USING gpu_query('%s')" % q1)
first = con.execute("SELECT * FROM q").fetchall()
t3 = time.perf_counter()
warm = []
for _ in range(5):
    a = time.perf_counter()
    rows = con.execute("SELECT * FROM q").fetchall()
    warm.append((time.perf_counter() - a) * 1e3)
    assert rows == first
info = json.loads(con.execute("select gpuagg_info()").fetchone()[0])
ru = resource.getrusage(resource.RUSAGE_SELF)
e = info["cache"]["entries"][0]
print(json.dumps({"open_ms": (t1 - t0) * 1e3, "cache_ms": (t2 - t1) * 1e3,
                  "q1_first_ms": (t3 - t2) * 1e3, "warm_ms": sorted(warm)[2],
                  "source": e.get("source", "rows"), "where": e["where"],
                  "path": info["last_scan"]["path"], "rows": repr(first),
                  "cpu_ms": (ru.ru_utime + ru.ru_stime) * 1e3,
                  "file": info["cache"].get("file")}))
"""


def child(lib, db, device, cfile, cdir):
    p = subprocess.run([PY, "-c", CHILD, lib, db, device, cfile, cdir, COLS, Q1],
                       capture_output=True, text=True)
    if p.returncode:
        sys.exit("child failed: %s" % p.stderr[-2000:])
    return json.loads(p.stdout)


def drop_pages(path):
    fd = os.open(path, os.O_RDONLY)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)


def read_ms(path):
    t = time.perf_counter()
    with open(path, "rb", buffering=0) as f:
        while f.read(1 << 24):
            pass
    return (time.perf_counter() - t) * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=float, default=6e6)
    ap.add_argument("--db")
    ap.add_argument("--dir", default="/tmp/gpuagg_cache_file_bench")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--base-lib")
    ap.add_argument("--csv")
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    db = a.db
    if not db:
        import lineitem
        db = os.path.join(a.dir, "lineitem_%d.db" % int(a.rows))
        lineitem.make(db, int(a.rows))
    # the writer: a load from rows that writes the file
    w = child(LIB, db, a.device, "on", a.dir)
    files = [os.path.join(a.dir, f) for f in os.listdir(a.dir) if f.endswith("-gpuagg")]
    print("writer:", w["source"], w["where"], w["file"], flush=True)
    if not files:
        sys.exit("no cache file was written: %r" % w["file"])
    fpath = max(files, key=os.path.getmtime)
    fbytes = os.path.getsize(fpath)
    modes = [("rows", LIB, "off"), ("file", LIB, "on"), ("file_cold", LIB, "on")]
    if a.base_lib:
        modes.insert(1, ("rows_base", a.base_lib, "off"))
    res = {m[0]: [] for m in modes}
    reads = {"warm": [], "cold": []}
    ref = None
    for rep in range(a.reps):
        for name, lib, cf in modes:
            if name == "file_cold":
                drop_pages(fpath)
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            r = child(lib, db, a.device, cf, a.dir)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            r["child_cpu_ms"] = ((after.ru_utime - before.ru_utime) +
                                 (after.ru_stime - before.ru_stime)) * 1e3
            want = "file" if name.startswith("file") else "rows"
            if r["source"] != want:
                sys.exit("%s: source %s, want %s: %r" % (name, r["source"], want, r["file"]))
            if r["path"] != "cache":
                sys.exit("%s: Q1 took path %s, not the cache" % (name, r["path"]))
            ref = ref or r["rows"]
            if r["rows"] != ref:
                sys.exit("%s: Q1 differs" % name)
            res[name].append(r)
        reads["warm"].append(read_ms(fpath))
        drop_pages(fpath)
        reads["cold"].append(read_ms(fpath))
    med = statistics.median
    lines = ["mode,rows,device,where,cache_ms,q1_first_ms,first_total_ms,warm_q1_ms,"
             "child_cpu_ms,file_bytes,file_read_warm_ms,file_read_cold_ms,goal_ms,within_goal"]
    rw, rc = med(reads["warm"]), med(reads["cold"])
    for name, _, _ in modes:
        rs = res[name]
        cache = med([r["cache_ms"] for r in rs])
        first = med([r["q1_first_ms"] for r in rs])
        tot = med([r["cache_ms"] + r["q1_first_ms"] for r in rs])
        warm = med([r["warm_ms"] for r in rs])
        cpu = med([r["child_cpu_ms"] for r in rs])
        rd = rc if name == "file_cold" else rw
        goal = 3 * warm + rd
        lines.append("%s,%d,%s,%s,%.1f,%.1f,%.1f,%.2f,%.0f,%d,%.1f,%.1f,%.1f,%s" % (
            name, int(a.rows), a.device, "/".join(sorted({r["where"] for r in rs})), cache, first, tot, warm, cpu, fbytes, rw, rc, goal,
            "yes" if name.startswith("file") and tot <= goal else
            ("n/a" if not name.startswith("file") else "no")))
    out = "\n".join(lines) + "\n"
    print(out)
    if a.csv:
        with open(a.csv, "w") as f:
            f.write(out)


if __name__ == "__main__":
    main()
