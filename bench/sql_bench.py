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

Prints a plain table last; --csv writes every median.
"""
import argparse
import csv
import os
import statistics
import subprocess
import sys
import time

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


def run_once(sqlite3, db, ext, setup, query):
    """One process, one query: (wall seconds, peak RSS KiB, output)."""
    script = f".load {ext}\n{setup}\n{query};\n"
    r, w = os.pipe()
    t0 = time.perf_counter()
    p = subprocess.Popen([sqlite3, db], stdin=subprocess.PIPE,
                         stdout=w, stderr=subprocess.STDOUT, text=True)
    os.close(w)
    p.stdin.write(script)
    p.stdin.close()
    out = os.read(r, 1 << 20).decode(errors="replace")
    _, status, ru = os.wait4(p.pid, 0)
    t1 = time.perf_counter()
    os.close(r)
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0 or "Error" in out:
        sys.exit(f"query failed: {query}\n{out}")
    return t1 - t0, ru.ru_maxrss, out.strip()


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
    a = ap.parse_args()
    os.makedirs(a.dbdir, exist_ok=True)
    kinds = a.kinds.split(",")
    variants = [(f, "") for f in a.funcs.split(",")]
    if a.gpu_paths:
        variants += [
            ("gpu_sum@cpu", "select gpuagg_config('device','cpu');"),
            ("gpu_sum@gpu", "select gpuagg_config('device','gpu');"),
        ]
    rows_out = []
    for rows in [int(x) for x in a.rows.split(",")]:
        db = os.path.join(a.dbdir, f"bench_{rows}.db")
        make_db(db, rows, kinds, a.sqlite3)
        for k in kinds:
            times = {v[0]: [] for v in variants}
            rss = {v[0]: 0 for v in variants}
            outs = {}
            for rep in range(a.reps + 1):  # the first round warms the cache
                order = variants if rep % 2 == 0 else variants[::-1]
                for name, setup in order:
                    fn = name.split("@")[0]
                    q = f"select {fn}(x) from t_{k}"
                    t, m, out = run_once(a.sqlite3, db, a.ext, setup, q)
                    if rep > 0:
                        times[name].append(t)
                        rss[name] = max(rss[name], m)
                    outs[name] = out.splitlines()[-1] if out else ""
            base = statistics.median(times.get("sum", [1.0]) or [1.0])
            for name, _ in variants:
                med = statistics.median(times[name])
                rows_out.append({
                    "rows": rows, "kind": k, "query": name,
                    "median_s": round(med, 4),
                    "ns_per_row": round(med / rows * 1e9, 1),
                    "x_sum": round(med / base, 3),
                    "peak_rss_mb": round(rss[name] / 1024, 1),
                    "result": outs[name][:40],
                })
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows_out[0].keys()))
            w.writeheader()
            w.writerows(rows_out)
    hdr = f"{'rows':>10} {'kind':>5} {'query':>12} {'median s':>9} " \
          f"{'ns/row':>7} {'x sum()':>8} {'RSS MB':>7}  result"
    print(hdr)
    for r in rows_out:
        print(f"{r['rows']:>10} {r['kind']:>5} {r['query']:>12} "
              f"{r['median_s']:>9} {r['ns_per_row']:>7} {r['x_sum']:>8} "
              f"{r['peak_rss_mb']:>7}  {r['result']}")


if __name__ == "__main__":
    main()
