#!/usr/bin/env python3
"""SQL-level benchmark: built-in aggregates against gpuagg's, through the
sqlite3 CLI, on on-disk tables.

Each measurement is one fresh `sqlite3` process running one query over a
table on disk (page cache warm), so wall time includes what a user pays:
the scan, the aggregate, and for gpu_* the extension's work.  Queries are
run in alternating order, REPS times each, and the median is reported with
peak RSS (from wait4's rusage of that very process).

  bench/sql_bench.py --rows 10000000 --reps 5            # issue 2's check
  bench/sql_bench.py --rows 1000,100000,10000000 --gpu-paths --csv out.csv

Every result is CHECKED (the CSV's `checked` column says against what): a
function gives the same bits on every path (gpu_sum, gpu_sum@cpu,
gpu_sum@gpu) and in every repetition, gpu_max/gpu_min equal max()/min() in
value and type, and gpu_sum/gpu_total/gpu_avg equal an exact reference
computed here in Python; a forced-GPU row must have run on the GPU (its
path, read in the untimed warm-up round, is in the `path` column).  Any
mismatch prints FAIL and exits 1.

Prints a plain table last; --csv writes every median.
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
from fractions import Fraction

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

KINDS = {
    "int": "(value * 2654435761) % 1000000007",
    "real": "((value * 2654435761) % 1000000007) * 1e-3",
    "mixed": "CASE WHEN value % 2 THEN (value * 2654435761) % 1000000007 "
             "ELSE ((value * 2654435761) % 1000000007) * 1e-3 END",
}


def make_db(path, rows, kinds, sqlite3):
    if os.path.exists(path):
        return
    stmts = []
    for k in kinds:
        stmts.append(f"CREATE TABLE t_{k}(x);")
        stmts.append(f"INSERT INTO t_{k} SELECT {KINDS[k]} "
                     f"FROM generate_series(1, {rows});")
    tmp = path + ".tmp"
    if os.path.exists(tmp):
        os.remove(tmp)
    subprocess.run([sqlite3, tmp], input="\n".join(stmts), text=True,
                   check=True)
    os.replace(tmp, path)


def run_once(sqlite3, db, ext, setup, query, probe=False):
    """One process, one query: (wall seconds, peak RSS KiB, result line).

    The query prints its result exactly (exact_query), after whatever the
    setup printed, so the result is the last line; the whole output is read
    to EOF.  With probe,
    a second line follows with gpuagg_info()'s path of that aggregate (only
    in the untimed warm-up round)."""
    script = f".load {ext}\n{setup}\n{query};\n"
    if probe:
        script += "select json_extract(gpuagg_info(), '$.last.path');\n"
    r, w = os.pipe()
    t0 = time.perf_counter()
    p = subprocess.Popen([sqlite3, db], stdin=subprocess.PIPE,
                         stdout=w, stderr=subprocess.STDOUT, text=True)
    os.close(w)
    p.stdin.write(script)
    p.stdin.close()
    chunks = []
    while True:  # to EOF: one read may return only the setup's echo
        b = os.read(r, 1 << 16)
        if not b:
            break
        chunks.append(b)
    _, status, ru = os.wait4(p.pid, 0)
    t1 = time.perf_counter()
    os.close(r)
    out = b"".join(chunks).decode(errors="replace")
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0 or "Error" in out:
        sys.exit(f"query failed: {query}\n{out}")
    lines = out.strip().split("\n")
    if probe:
        return t1 - t0, ru.ru_maxrss, lines[-2] if len(lines) > 1 else "", lines[-1].strip("'")
    return t1 - t0, ru.ru_maxrss, lines[-1]


def exact_query(fn, table):
    """The aggregate, its result printed exactly: 'real:<IEEE-754 hex>',
    'integer:<n>', 'null:NULL' (the CLI's decimal output of a REAL is not
    always exact past 17 digits).  One row, so the wrapping costs nothing."""
    return (f"select typeof(r) || ':' || (case when typeof(r) = 'real' then "
            f"hex(ieee754_to_blob(r)) else quote(r) end) from (select {fn}(x) r from {table})")


def parse_exact(s):
    """exact_query's output as a Python value (float, int, None, or text)."""
    kind, _, v = s.partition(":")
    if kind == "real":
        return struct.unpack(">d", bytes.fromhex(v))[0]
    if kind == "integer":
        return int(v)
    if kind == "null":
        return None
    return s


def show_exact(s):
    v = parse_exact(s)
    return repr(v) if isinstance(v, float) else s


def references(db, kind, fns):
    """Independent references for the column t_<kind>: int totals exactly,
    real ones by math.fsum (correctly rounded); avg by exact rationals.
    Every value here is an integer below 2^53 or a double."""
    con = sqlite3.connect(db)
    vals = [v for (v,) in con.execute(f"select x from t_{kind}")]
    con.close()
    ref = {}
    allint = all(isinstance(v, int) for v in vals)
    exact = sum(Fraction(v) for v in vals) if "gpu_avg" in fns else None
    if allint:
        ref["gpu_sum"] = sum(vals)
    else:
        ref["gpu_sum"] = math.fsum(vals)
    ref["gpu_total"] = math.fsum(vals)
    if exact is not None:
        ref["gpu_avg"] = float(exact / len(vals))
    ref["count"] = len(vals)
    return ref


def same_result(a, b):
    """Same value AND type, bit for bit for reals."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return struct.pack("<d", a) == struct.pack("<d", b)
    return a == b


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", default="10000000")
    ap.add_argument("--kinds", default="int,real")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--funcs", default="count,sum,gpu_sum")
    ap.add_argument("--gpu-paths", action="store_true",
                    help="also gpu_sum forced onto the CPU and the GPU path")
    ap.add_argument("--dbdir", default=os.path.join(ROOT, "bench", "out"))
    ap.add_argument("--ext", default=os.path.join(ROOT, "libgpuagg"))
    ap.add_argument("--sqlite3", default=os.environ.get("SQLITE3", "sqlite3"))
    ap.add_argument("--csv")
    ap.add_argument("--no-check", action="store_true",
                    help="skip the references (results are still compared across paths)")
    a = ap.parse_args()
    os.makedirs(a.dbdir, exist_ok=True)
    kinds = a.kinds.split(",")
    variants = [(f, "") for f in a.funcs.split(",")]
    if a.gpu_paths:
        variants += [
            ("gpu_sum@cpu", "select gpuagg_config('device','cpu');"),
            ("gpu_sum@gpu", "select gpuagg_config('device','gpu');"),
        ]
    rows_out, failures = [], []
    for rows in [int(x) for x in a.rows.split(",")]:
        db = os.path.join(a.dbdir, f"bench_{rows}.db")
        make_db(db, rows, kinds, a.sqlite3)
        for k in kinds:
            times = {v[0]: [] for v in variants}
            rss = {v[0]: 0 for v in variants}
            outs, paths = {}, {}
            for rep in range(a.reps + 1):  # the first round warms the cache
                order = variants if rep % 2 == 0 else variants[::-1]
                for name, setup in order:
                    fn = name.split("@")[0]
                    q = exact_query(fn, f"t_{k}")
                    probe = rep == 0 and fn.startswith("gpu_")
                    res = run_once(a.sqlite3, db, a.ext, setup, q, probe)
                    t, m, out = res[:3]
                    if probe:
                        paths[name] = res[3]
                    if rep > 0:
                        times[name].append(t)
                        rss[name] = max(rss[name], m)
                    if name in outs and outs[name] != out:
                        failures.append(f"{rows} {k} {name}: result changed between runs: "
                                        f"{outs[name]} then {out}")
                    outs[name] = out
            # CHECK every result: one function gives the same bits on every
            # path; gpu_max/min equal max/min (value and type); sums equal an
            # independent reference
            fns = {name.split("@")[0] for name, _ in variants}
            ref = references(db, k, fns) if not a.no_check else {}
            checked = {}
            for name, _ in variants:
                fn = name.split("@")[0]
                got = parse_exact(outs[name])
                how = []
                if fn != name and fn in outs:
                    how.append(f"={fn}")
                    if outs[name] != outs[fn]:
                        failures.append(f"{rows} {k} {name}: {outs[name]} but {fn} gives {outs[fn]}")
                builtin = fn[4:] if fn.startswith("gpu_") else None
                if builtin in ("max", "min") and builtin in outs:
                    how.append(f"={builtin}()")
                    if outs[name] != outs[builtin]:
                        failures.append(f"{rows} {k} {name}: {outs[name]} but {builtin}() gives "
                                        f"{outs[builtin]}")
                if fn in ref:
                    how.append("=exact" if fn != "count" else "=rows")
                    if not same_result(got, ref[fn]):
                        failures.append(f"{rows} {k} {name}: {outs[name]} but the reference is "
                                        f"{ref[fn]!r}")
                if name.endswith("@gpu") and a.gpu_paths and paths.get(name) not in ("gpu", "mixed"):
                    failures.append(f"{rows} {k} {name}: forced GPU ran on path {paths.get(name)!r}")
                checked[name] = " ".join(how) or "-"
            base = statistics.median(times.get("sum", [1.0]) or [1.0])
            for name, _ in variants:
                med = statistics.median(times[name])
                rows_out.append({
                    "rows": rows, "kind": k, "query": name,
                    "median_s": round(med, 4),
                    "ns_per_row": round(med / rows * 1e9, 1),
                    "x_sum": round(med / base, 3),
                    "peak_rss_mb": round(rss[name] / 1024, 1),
                    "result": show_exact(outs[name]),
                    "path": paths.get(name, ""),
                    "checked": checked[name],
                })
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows_out[0].keys()))
            w.writeheader()
            w.writerows(rows_out)
    hdr = f"{'rows':>10} {'kind':>5} {'query':>12} {'median s':>9} " \
          f"{'ns/row':>7} {'x sum()':>8} {'RSS MB':>7}  result (checked)"
    print(hdr)
    for r in rows_out:
        print(f"{r['rows']:>10} {r['kind']:>5} {r['query']:>12} "
              f"{r['median_s']:>9} {r['ns_per_row']:>7} {r['x_sum']:>8} "
              f"{r['peak_rss_mb']:>7}  {r['result']} ({r['checked']})")
    for f in failures:
        print("FAIL: " + f)
    if failures:
        return 1
    print("results: every one checked (see the checked column)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
