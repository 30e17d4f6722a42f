#!/usr/bin/python3
"""Accuracy of SQLite's sum() and total() against gpuagg's gpu_sum().

For a few adversarial data sets, the error of each aggregate in units in
the last place (ulps) of the exact sum, and relative to it.  The exact sum
is computed with Python integers (every double is an integer multiple of
2^-1074) and rounded once by Fraction -> float, which rounds correctly; it
is cross-checked with math.fsum.  Values are stored in an in-memory table in
the order shown, which is the order sum() adds them in.

  bench/accuracy.py                    # 1e6-value data sets, table + CSV
  bench/accuracy.py --quick            # 1e4 values (smoke test, seconds)
  bench/accuracy.py --host node        # run by better-sqlite3's newer SQLite
                                       # -> bench/out/accuracy_node.csv
  bench/accuracy.py --device gpu       # gpu_sum forced onto the GPU path, 1 MiB
                                       # chunks, -> bench/out/accuracy_gpu.csv; FAILS
                                       # unless the GPU really ran it

Needs a Python whose sqlite3 module can load extensions (Debian's
/usr/bin/python3).  Error in ulps: |result - E| / ulp(E), where E is the
exact sum rounded once to the nearest double; "0" means the correctly
rounded result.  The relative error is against the exact sum itself.  SQLite before 3.43 adds with plain
doubles in sum() and total(); 3.43+ uses Kahan-Babuska-Neumaier summation,
so the version printed matters (with 3.43+, only ill_conditioned and
overflow_midway still show sum() errors).
"""
import argparse
import csv
import json
import math
import os
import random
import shutil
import sqlite3
import struct
import subprocess
import sys
import tempfile
from fractions import Fraction

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SCALE = 1074  # 2^-1074 is the smallest subnormal


def exact_int(x):
    """x * 2^1074 as an exact Python integer."""
    n, d = x.as_integer_ratio()
    return n * ((1 << SCALE) // d)


def datasets(n, seed):
    """(name, description, values): adversarial inputs, n values or so."""
    rnd = random.Random(seed)
    k = max(1, n // 3)
    yield ("cancel", "(1e100, 1, -1e100) repeated",
           [v for _ in range(k) for v in (1e100, 1.0, -1e100)])
    k = max(1, n // 4)
    yield ("neumaier", "(1, 1e100, 1, -1e100) repeated; defeats Kahan",
           [v for _ in range(k) for v in (1.0, 1e100, 1.0, -1e100)])
    yield ("tenths", "0.1 n times", [0.1] * n)
    yield ("tiny_after_one", "1.0 then n-1 times 1e-16",
           [1.0] + [1e-16] * (n - 1))
    yield ("big_plus_ones", "2^53 then n-1 times 1.0",
           [2.0 ** 53] + [1.0] * (n - 1))
    yield ("random01", "uniform random in [0, 1)", [rnd.random() for _ in range(n)])
    yield ("range", "random sign, magnitude 10^-300..10^300",
           [rnd.choice((-1.0, 1.0)) * rnd.random() * 10.0 ** rnd.randint(-300, 300)
            for _ in range(n)])
    yield ("alternating", "(-1)^i * (1 + u_i) * 2^(60 i/n): signs alternate, magnitudes grow",
           [(-1.0) ** i * (1.0 + rnd.random()) * 2.0 ** (i * 60 / n) for i in range(n)])
    k = max(1, n // 5)
    yield ("overflow_midway", "(1e308, 1e308, -1e308, -1e308, 1) repeated: running sum overflows",
           [v for _ in range(k) for v in (1e308, 1e308, -1e308, -1e308, 1.0)])
    # ill-conditioned: values with exponents 2^-60..2^60 and nearly all of
    # them cancelled by their negation with a small change, shuffled
    half = max(1, n // 2)
    xs = [rnd.uniform(1, 2) * 2.0 ** rnd.randint(-60, 60) * rnd.choice((-1, 1))
          for _ in range(half)]
    ys = [-x * (1 + rnd.choice((0, 0, 0, 2 ** -40))) for x in xs]
    ill = xs + ys
    rnd.shuffle(ill)
    yield ("ill_conditioned", "x and -x(1+tiny) pairs, 2^-60..2^60, shuffled", ill)


def ulps(result, exact_float):
    """Distance from the correctly rounded exact sum, in its ulps."""
    if result is None:
        return math.nan
    if math.isinf(result) or math.isinf(exact_float):
        return 0.0 if result == exact_float else math.inf
    err = abs(Fraction(result) - Fraction(exact_float))
    return float(err / Fraction(math.ulp(exact_float)))


def rel(result, exact_frac):
    if result is None or math.isinf(result):
        return math.nan
    if exact_frac == 0:
        return 0.0 if result == 0 else math.inf
    return float(abs(Fraction(result) - exact_frac) / abs(exact_frac))


def unhex(h):
    """accuracy_node.js's exact encoding: IEEE-754 bits in hex, or None."""
    return None if h is None else struct.unpack(">d", bytes.fromhex(h))[0]


def run_node(a, sets):
    """Store the data sets in a database file, let bench/accuracy_node.js
    run the aggregates in better-sqlite3; {name: its JSON line}."""
    mods = os.path.join(ROOT, "tests", "hosts", "node", "node_modules")
    if not os.path.isdir(os.path.join(mods, "better-sqlite3")):
        sys.exit("--host node needs better-sqlite3 in tests/hosts/node/node_modules "
                 "(make test-hosts installs it)")
    tmp = tempfile.mkdtemp(prefix="gpuagg_acc_")
    db = os.path.join(tmp, "acc.db")
    c = sqlite3.connect(db)
    for name, _, vals in sets:
        c.execute(f"CREATE TABLE v_{name}(x REAL)")
        c.executemany(f"INSERT INTO v_{name} VALUES (?)", ((v,) for v in vals))
    c.commit()
    c.close()
    p = subprocess.run(["node", os.path.join(HERE, "accuracy_node.js"), db, a.ext, a.device,
                        str(a.chunk_bytes or 0)], capture_output=True, text=True,
                       env=dict(os.environ, NODE_PATH=mods))
    shutil.rmtree(tmp, ignore_errors=True)
    if p.returncode != 0:
        sys.exit("bench/accuracy_node.js failed:\n" + p.stderr[-2000:])
    out = {}
    for line in p.stdout.splitlines():
        r = json.loads(line)
        out[r["table"][2:]] = r
    return out


def same_bits(x, y):
    if x is None or y is None:
        return x is None and y is None
    return type(x) is type(y) and struct.pack("<d", x) == struct.pack("<d", y)


def fmt_ulps(u):
    if math.isnan(u):
        return "n/a"
    if u == 0:
        return "0"
    if u < 1e4:
        return f"{u:.3g}"
    return f"{u:.2e}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1_000_000, help="values per data set")
    ap.add_argument("--quick", action="store_true", help="10000 values per data set")
    ap.add_argument("--only", help="comma-separated data set names")
    ap.add_argument("--ext", default=os.environ.get("GPUAGG_LIB", os.path.join(ROOT, "libgpuagg")))
    ap.add_argument("--device", choices=("auto", "cpu", "gpu"), default="auto",
                    help="gpuagg's device; gpu also sets cpu_max_rows 0")
    ap.add_argument("--chunk-bytes", type=int, default=None,
                    help="gpuagg's chunk_bytes (default with --device gpu: 1 MiB, so a "
                         "1e6-value set is ~125 GPU partials merged)")
    ap.add_argument("--csv", default=None,
                    help="default bench/out/accuracy.csv (accuracy_gpu.csv with --device gpu)")
    ap.add_argument("--seed", type=int, default=20240601)
    ap.add_argument("--host", choices=("python", "node"), default="python",
                    help="node: sum()/total()/gpu_sum() run by better-sqlite3's bundled SQLite "
                         "(bench/accuracy_node.js; make test-hosts installs better-sqlite3)")
    a = ap.parse_args()
    n = 10_000 if a.quick else a.n
    if a.csv is None:
        a.csv = os.path.join(ROOT, "bench", "out", "accuracy%s%s.csv" % (
            "_gpu" if a.device == "gpu" else "", "_node" if a.host == "node" else ""))
    if a.chunk_bytes is None and a.device == "gpu":
        a.chunk_bytes = 1 << 20

    con = sqlite3.connect(":memory:")
    if not hasattr(con, "enable_load_extension"):
        print(f"SKIP: {sys.executable}'s sqlite3 module cannot load extensions; "
              "run bench/accuracy.py with /usr/bin/python3")
        return 0
    con.enable_load_extension(True)
    con.load_extension(a.ext)
    con.enable_load_extension(False)
    con.execute(f"SELECT gpuagg_config('device', '{a.device}')")
    if a.device == "gpu":
        con.execute("SELECT gpuagg_config('cpu_max_rows', 0)")
    if a.chunk_bytes:
        con.execute("SELECT gpuagg_config('chunk_bytes', ?)", (a.chunk_bytes,))
    cfg = dict(con.execute("SELECT key, value FROM json_each(json_extract(gpuagg_info(), '$.config'))"))
    ver = con.execute("SELECT gpuagg_version()").fetchone()[0]
    if a.host == "python":
        print(f"# SQLite {sqlite3.sqlite_version} (sum/total: "
              f"{'plain double addition' if sqlite3.sqlite_version_info < (3, 43) else 'Kahan-Babuska-Neumaier'}),"
              f" gpuagg {ver}, device={a.device}, {n} values per data set, seed {a.seed}")

    only = set(a.only.split(",")) if a.only else None
    sets = [d for d in datasets(n, a.seed) if not only or d[0] in only]
    node = run_node(a, sets) if a.host == "node" else None
    if a.host == "node":
        v = node[sets[0][0]]["sqlite"]
        print(f"# better-sqlite3's SQLite {v} (sum/total: "
              f"{'plain double addition' if tuple(map(int, v.split('.'))) < (3, 43) else 'Kahan-Babuska-Neumaier'}),"
              f" gpuagg {ver}, device={a.device}, {n} values per data set, seed {a.seed}")
    rows = []
    for name, desc, vals in sets:
        total_int = sum(exact_int(v) for v in vals)
        exact = Fraction(total_int, 1 << SCALE)
        try:
            exact_f = float(exact)  # correctly rounded (int / int true division)
        except OverflowError:       # beyond the double range: rounds to +-inf
            exact_f = math.copysign(math.inf, exact)
        try:
            fs = math.fsum(vals)
        except OverflowError:  # fsum's partials overflow before cancelling
            fs = None
        if node:
            r = node[name]
            s, t, g, gc = (unhex(r[k]) for k in ("sum", "total", "gpu_sum", "gpu_sum_cpu"))
            path, chunks_gpu, version = r["path"], r["chunks_gpu"], r["sqlite"]
        else:
            con.execute("DROP TABLE IF EXISTS v")
            con.execute("CREATE TABLE v(x REAL)")
            con.executemany("INSERT INTO v VALUES (?)", ((v,) for v in vals))
            s, t, g = con.execute("SELECT sum(x), total(x), gpu_sum(x) FROM v").fetchone()
            path, chunks_gpu = con.execute(
                "SELECT json_extract(gpuagg_info(), '$.last.path'), "
                "json_extract(gpuagg_info(), '$.last.chunks_gpu')").fetchone()
            # the same gpu_sum on the CPU path, for the bits
            con.execute("SELECT gpuagg_config('device', 'cpu')")
            gc = con.execute("SELECT gpu_sum(x) FROM v").fetchone()[0]
            con.execute("SELECT gpuagg_config('device', ?)", (a.device,))
            version = sqlite3.sqlite_version
        row = {"dataset": name, "n": len(vals), "description": desc,
               "exact": repr(exact_f), "fsum_agrees": "n/a" if fs is None else fs == exact_f,
               "sum": repr(s), "sum_ulps": ulps(s, exact_f), "sum_rel": rel(s, exact),
               "total": repr(t), "total_ulps": ulps(t, exact_f),
               "total_rel": rel(t, exact),
               "gpu_sum": repr(g), "gpu_sum_ulps": ulps(g, exact_f),
               "gpu_sum_rel": rel(g, exact), "gpu_path": path,
               "gpu_chunks": chunks_gpu, "chunk_bytes": cfg.get("chunk_bytes"),
               "same_bits_as_cpu_path": same_bits(g, gc),
               "device": a.device, "host": a.host, "sqlite": version}
        rows.append(row)
        print(f"  {name}: done", file=sys.stderr)

    hdr = (f"{'data set':<16} {'n':>8} {'exact (rounded)':>24} {'sum() ulps':>11} "
           f"{'total() ulps':>12} {'gpu_sum ulps':>12} {'sum() rel err':>13}  sum() result")
    print(hdr)
    print("-" * len(hdr))
    for r in rows:
        print(f"{r['dataset']:<16} {r['n']:>8} {float(r['exact']):>24.17g} "
              f"{fmt_ulps(r['sum_ulps']):>11} {fmt_ulps(r['total_ulps']):>12} "
              f"{fmt_ulps(r['gpu_sum_ulps']):>12} {r['sum_rel']:>13.2e}  {r['sum']}")
    bad = [r["dataset"] for r in rows if r["gpu_sum_ulps"] != 0 or r["fsum_agrees"] is False
           or not r["same_bits_as_cpu_path"]]
    if a.device == "gpu":  # a forced-GPU table must come from the GPU
        bad += ["%s (ran on path %r)" % (r["dataset"], r["gpu_path"]) for r in rows
                if r["gpu_path"] not in ("gpu", "mixed")]
    if a.csv and rows:
        os.makedirs(os.path.dirname(os.path.abspath(a.csv)), exist_ok=True)
        with open(a.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
            w.writeheader()
            w.writerows(rows)
        print(f"# wrote {a.csv}")
    if bad:
        print(f"FAIL: gpu_sum not correctly rounded, not the CPU path's bits, not on the "
              f"requested path (or fsum disagrees) on: {', '.join(bad)}")
        return 1
    print(f"gpu_sum: correctly rounded (0 ulps) on every data set, path(s) "
          f"{sorted({r['gpu_path'] for r in rows})}, the same bits as the CPU path")
    return 0


if __name__ == "__main__":
    sys.exit(main())
