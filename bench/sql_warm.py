#!/usr/bin/env python3
"""SQL level in one long-lived connection: where does the GPU path win?

bench/sql_bench.py starts a process per query, so every GPU query there pays
CUDA's start-up (context creation, module load, teardown at exit).  Here one
connection first starts CUDA (a warm-up query), then times, alternating and
repeated, sum() and gpu_sum() forced onto the CPU and onto the GPU, on
on-disk tables of growing size.  The crossover, if any, is what
cpu_max_rows' default is chosen from (bench/RESULTS.md).

  bench/sql_warm.py --rows 1000000,10000000,100000000 --csv out.csv

Every result is checked: gpu_sum gives the same bits on both paths and in
every repetition, equals sum() on integers and an exact reference (computed
here, up to --ref-rows rows), gpu_max equals max(); the forced-GPU rows must
have run on the GPU (gpuagg_info()'s last path, read outside the timing).
A mismatch prints FAIL and exits 1.  Needs a GPU.
"""
import argparse
import csv
import math
import os
import sqlite3
import statistics
import struct
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = {"int": "(value * 2654435761) % 1000000007",
        "real": "((value * 2654435761) % 1000000007) * 1e-3"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", default="1000000,10000000")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--devices", default="1")
    ap.add_argument("--dbdir", default="/tmp/gpuagg_warm")
    ap.add_argument("--ext", default=os.path.join(ROOT, "libgpuagg"))
    ap.add_argument("--sqlite3", default=os.environ.get("SQLITE3", "sqlite3"))
    ap.add_argument("--csv")
    ap.add_argument("--ref-rows", type=int, default=10000000,
                    help="compute an exact reference in Python up to this many rows")
    a = ap.parse_args()
    os.makedirs(a.dbdir, exist_ok=True)
    out, fails = [], []
    for rows in [int(x) for x in a.rows.split(",")]:
        db = os.path.join(a.dbdir, f"w_{rows}.db")
        if not os.path.exists(db):
            sql = "".join(f"create table t_{k}(x); insert into t_{k} select "
                          f"{e} from generate_series(1, {rows});"
                          for k, e in DATA.items())
            subprocess.run([a.sqlite3, db + ".tmp"], input=sql, text=True,
                           check=True)
            os.replace(db + ".tmp", db)
        con = sqlite3.connect(db)
        con.enable_load_extension(True)
        con.load_extension(a.ext)
        con.execute("select gpuagg_config('devices', ?)", (a.devices,))
        con.execute("select gpuagg_config('device','gpu')")
        con.execute("select gpu_sum(x) from t_int")  # CUDA starts here
        variants = [("sum", "cpu", "sum"), ("gpu_sum@cpu", "cpu", "gpu_sum"),
                    ("gpu_sum@gpu", "gpu", "gpu_sum"), ("max", "cpu", "max"),
                    ("gpu_max@gpu", "gpu", "gpu_max")]
        for k in DATA:
            t = {v[0]: [] for v in variants}
            res, paths = {}, {}
            for rep in range(a.reps + 1):
                for name, dev, fn in (variants if rep % 2 else variants[::-1]):
                    con.execute("select gpuagg_config('device', ?)", (dev,))
                    t0 = time.perf_counter()
                    r = con.execute(f"select {fn}(x) from t_{k}").fetchone()[0]
                    dt = time.perf_counter() - t0
                    if rep:
                        t[name].append(dt)
                    if name in res and not same(res[name], r):
                        fails.append(f"{rows} {k} {name}: {r!r} after {res[name]!r}")
                    res[name] = r
                    if fn.startswith("gpu_"):  # untimed: where it ran
                        paths[name] = con.execute(
                            "select json_extract(gpuagg_info(), '$.last.path')").fetchone()[0]
            # CHECK: the same bits on both paths; what the built-in gives
            # where it is exact (int sums, max); the GPU rows ran on the GPU
            checks = [("gpu_sum@cpu", "gpu_sum@gpu"), ("max", "gpu_max@gpu")]
            if k == "int":
                checks.append(("sum", "gpu_sum@cpu"))
            for x, y in checks:
                if not same(res[x], res[y]):
                    fails.append(f"{rows} {k}: {x} gives {res[x]!r}, {y} gives {res[y]!r}")
            if rows <= a.ref_rows:  # an exact reference, computed here
                vals = [v for (v,) in con.execute(f"select x from t_{k}")]
                ref = sum(vals) if k == "int" else math.fsum(vals)
                if not same(res["gpu_sum@cpu"], ref):
                    fails.append(f"{rows} {k}: gpu_sum gives {res['gpu_sum@cpu']!r}, exact {ref!r}")
            for name in ("gpu_sum@gpu", "gpu_max@gpu"):
                if paths.get(name) not in ("gpu", "mixed"):
                    fails.append(f"{rows} {k} {name}: ran on path {paths.get(name)!r}")
            base = statistics.median(t["sum"])
            for name, _, _ in variants:
                m = statistics.median(t[name])
                out.append({"rows": rows, "kind": k, "query": name,
                            "median_s": round(m, 4),
                            "ns_per_row": round(m / rows * 1e9, 1),
                            "x_sum": round(m / base, 3),
                            "result": repr(res[name]),
                            "path": paths.get(name, "")})
        con.close()
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(out[0]))
            w.writeheader()
            w.writerows(out)
    print(f"{'rows':>10} {'kind':>5} {'query':>12} {'median s':>9} "
          f"{'ns/row':>7} {'x sum()':>8}  result")
    for r in out:
        print(f"{r['rows']:>10} {r['kind']:>5} {r['query']:>12} "
              f"{r['median_s']:>9} {r['ns_per_row']:>7} {r['x_sum']:>8}  "
              f"{r['result']} {r['path']}")
    for f in fails:
        print("FAIL: " + f)
    if fails:
        return 1
    print("results: the same bits on both paths, equal to the built-ins where those are "
          "exact, and to an exact reference up to --ref-rows")
    return 0


def same(a, b):
    """Same value AND type, bit for bit for reals."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return struct.pack("<d", a) == struct.pack("<d", b)
    return a == b


if __name__ == "__main__":
    sys.exit(main())
