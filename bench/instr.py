#!/usr/bin/env python3
"""Instructions per row of sum() and gpuagg's aggregates, counted by callgrind.

Wall time on a shared 2-core machine moves with the neighbours' load; the
instruction count of a query does not.  Each query runs in its own sqlite3
process under `valgrind --tool=callgrind` over an on-disk table of ROWS rows
(made with generate_series); the count of a process that runs `select 1`
with the extension loaded is subtracted, and the rest divided by ROWS.
Every result is also checked: the gpu_* result must equal the built-in's
(INTEGER sums, max, min: value and type) or an exact reference computed here
(REAL sums: math.fsum), else FAIL and exit 1.

  bench/instr.py --rows 1000000 --csv bench/out/instr.csv

Needs valgrind.  The CSV: kind, query, rows, instructions (whole process),
per_row (after the `select 1` process is subtracted), x_sum (per_row over
sum()'s in the same run), more_than_sum (per_row minus sum()'s), result.
"""
import argparse
import csv
import math
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sql_bench import exact_query, parse_exact, same_result as same  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KINDS = {"int": "(value * 2654435761) % 1000000007",
         "real": "((value * 2654435761) % 1000000007) * 1e-3"}


def count(sqlite3_bin, db, ext, sql):
    """(instructions, output) of one process running sql."""
    with tempfile.NamedTemporaryFile() as out:
        p = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out.name,
                            sqlite3_bin, "-batch", "-cmd", ".load " + ext, db, sql], capture_output=True, text=True)
    m = re.search(r"Collected : (\d+)", p.stderr)
    if p.returncode != 0 or not m:
        sys.exit("callgrind failed on %r: %s" % (sql, p.stderr[-500:]))
    return int(m.group(1)), p.stdout.strip()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=1000000)
    ap.add_argument("--funcs", default="sum,gpu_sum,total,gpu_total,max,gpu_max")
    ap.add_argument("--ext", default=os.path.join(ROOT, "libgpuagg"))
    ap.add_argument("--sqlite3", default=os.environ.get("SQLITE3", "sqlite3"))
    ap.add_argument("--csv")
    a = ap.parse_args()
    if not shutil.which("valgrind"):
        print("SKIP: no valgrind (apt-get install valgrind)")
        return 0
    tmp = tempfile.mkdtemp(prefix="gpuagg_instr_")
    db = os.path.join(tmp, "t.db")
    sql = "".join(f"create table t_{k}(x); insert into t_{k} select {e} from "
                  f"generate_series(1, {a.rows});" for k, e in KINDS.items())
    subprocess.run([a.sqlite3, db], input=sql, text=True, check=True)
    base, _ = count(a.sqlite3, db, a.ext, "select 1")
    con = sqlite3.connect(db)
    out, fails = [], []
    for kind in KINDS:
        vals = [v for (v,) in con.execute(f"select x from t_{kind}")]
        ref = {"gpu_sum": sum(vals) if kind == "int" else math.fsum(vals),
               "gpu_total": math.fsum(vals)}
        res = {}
        for fn in a.funcs.split(","):
            n, r = count(a.sqlite3, db, a.ext, exact_query(fn, f"t_{kind}"))
            res[fn] = r
            out.append({"kind": kind, "query": fn, "rows": a.rows, "instructions": n,
                        "per_row": round((n - base) / a.rows, 1), "result": r})
            v = parse_exact(r)
            out[-1]["result"] = repr(v) if isinstance(v, float) else r
        for fn, r in res.items():
            if not fn.startswith("gpu_"):
                continue
            b, got = fn[4:], parse_exact(r)
            if fn in ref and not same(got, ref[fn] if fn != "gpu_total" else float(ref[fn])):
                fails.append(f"{kind} {fn}: {got!r}, exact {ref[fn]!r}")
            if b in res and (b in ("max", "min") or (b == "sum" and kind == "int")) and res[b] != r:
                fails.append(f"{kind} {fn}: {r}, {b}() gives {res[b]}")
    con.close()
    shutil.rmtree(tmp, ignore_errors=True)
    per = {(r["kind"], r["query"]): r["per_row"] for r in out}
    for r in out:
        s = per.get((r["kind"], "sum"))
        r["x_sum"] = round(r["per_row"] / s, 3) if s else ""
        r["more_than_sum"] = round(r["per_row"] - s, 1) if s else ""
    print(f"# callgrind, {a.rows} rows, `select 1` process: {base} instructions")
    print(f"{'kind':>5} {'query':>10} {'instructions':>14} {'per row':>8} {'x sum()':>8} "
          f"{'+ vs sum':>8}  result")
    for r in out:
        print(f"{r['kind']:>5} {r['query']:>10} {r['instructions']:>14} {r['per_row']:>8} "
              f"{r['x_sum']:>8} {r['more_than_sum']:>8}  {r['result']}")
    if a.csv:
        os.makedirs(os.path.dirname(os.path.abspath(a.csv)), exist_ok=True)
        with open(a.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=["kind", "query", "rows", "instructions", "per_row",
                                              "x_sum", "more_than_sum", "result"])
            w.writeheader()
            w.writerows(out)
    for f in fails:
        print("FAIL: " + f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
