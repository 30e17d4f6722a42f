#!/usr/bin/env python3
"""test_python.py — gpuagg loaded by Python's standard sqlite3 module.

Run with an interpreter whose sqlite3 module can load extensions (Debian's
/usr/bin/python3; tests/run_all.sh passes $PYTHON).  Where the interpreter
lacks Connection.enable_load_extension, every check prints a SKIP line.

Prints FAIL/SKIP lines (PASS lines with VERBOSE=1) and one summary line
    RESULT python: <p> passed, <f> failed, <s> skipped
Environment: GPUAGG_LIB (extension path without .so; default <repo>/libgpuagg).
"""
import json
import math
import os
import random
import re
import sqlite3
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIB = os.environ.get("GPUAGG_LIB") or os.path.join(ROOT, "libgpuagg")
VERBOSE = os.environ.get("VERBOSE") == "1"
SUITE = "python"
INT64_MAX = (1 << 63) - 1

CHECKS = ["load", "load_full_path", "load_twice", "version", "cancel", "tenth", "int_exact",
          "int_overflow", "big_int_plus_real", "empty", "total_avg", "max_typeof",
          "min_typeof", "max_text_blob", "params_bound", "fsum_random", "forced_gpu_same",
          "window_running", "window_sliding", "window_max", "group_by", "info_json",
          "two_connections", "example"]


class Reporter:
    def __init__(self):
        self.p = self.f = self.s = 0

    def check(self, name, ok, detail=""):
        if ok:
            self.p += 1
            if VERBOSE:
                print(f"PASS [{SUITE}] {name}")
        else:
            self.f += 1
            print(f"FAIL [{SUITE}] {name}: {detail}")
        sys.stdout.flush()

    def skip(self, name, why):
        self.s += 1
        print(f"SKIP: [{SUITE}] {name} ({why})")

    def finish(self):
        print(f"RESULT {SUITE}: {self.p} passed, {self.f} failed, {self.s} skipped")
        sys.exit(1 if self.f else 0)


def same(a, b):
    """Equal value and type; floats compared bit for bit."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a.hex() == b.hex() or (math.isnan(a) and math.isnan(b))
    return a == b


def connect(lib=LIB):
    con = sqlite3.connect(":memory:", isolation_level=None)
    con.enable_load_extension(True)
    con.load_extension(lib)
    con.enable_load_extension(False)
    return con


def q(con, sql, *args):
    return con.execute(sql, args).fetchone()


def values(con, vals, col="x"):
    con.execute("DROP TABLE IF EXISTS v")
    con.execute(f"CREATE TABLE v(k INTEGER PRIMARY KEY, {col})")
    con.executemany(f"INSERT INTO v({col}) VALUES (?)", [(x,) for x in vals])


def run(rep):
    # a failing check() must not stop later ones: each block catches its own errors
    def guarded(name, fn):
        try:
            fn()
        except Exception as e:  # noqa: BLE001
            rep.check(name, False, f"{type(e).__name__}: {e}")

    con = None
    try:
        con = connect()
        rep.check("load", True)
    except Exception as e:  # noqa: BLE001
        rep.check("load", False, f"{LIB}: {e}")
        return

    def load_full_path():
        c = connect(LIB + ".so")
        rep.check("load_full_path", q(c, "SELECT gpuagg_version()")[0] is not None)
    guarded("load_full_path", load_full_path)

    def load_twice():
        con.enable_load_extension(True)
        con.load_extension(LIB)
        con.enable_load_extension(False)
        rep.check("load_twice", same(q(con, "SELECT gpu_sum(1.5)")[0], 1.5))
    guarded("load_twice", load_twice)

    def version():
        v = q(con, "SELECT gpuagg_version()")[0]
        rep.check("version", isinstance(v, str) and re.fullmatch(r"\d+\.\d+\.\d+", v), repr(v))
    guarded("version", version)

    def cancel():
        values(con, [1e100, 1.0, -1e100])
        s, g = q(con, "SELECT sum(x), gpu_sum(x) FROM v")
        rep.check("cancel", same(s, 0.0) and same(g, 1.0), f"sum={s!r} gpu_sum={g!r}")
    guarded("cancel", cancel)

    def tenth():
        values(con, [0.1] * 10)
        g = q(con, "SELECT gpu_sum(x) FROM v")[0]
        rep.check("tenth", same(g, 1.0), repr(g))
    guarded("tenth", tenth)

    def int_exact():
        values(con, [INT64_MAX, 1, -1])
        g, t = q(con, "SELECT gpu_sum(x), typeof(gpu_sum(x)) FROM v")
        rep.check("int_exact", same(g, INT64_MAX) and t == "integer", f"{g!r} {t}")
    guarded("int_exact", int_exact)

    def int_overflow():
        values(con, [INT64_MAX, 1])
        try:
            r = q(con, "SELECT gpu_sum(x) FROM v")
            rep.check("int_overflow", False, f"no error, got {r!r}")
        except sqlite3.OperationalError as e:
            rep.check("int_overflow", "integer overflow" in str(e), str(e))
    guarded("int_overflow", int_overflow)

    def big_int_plus_real():
        values(con, [9007199254740993, 1.0])
        g = q(con, "SELECT gpu_sum(x) FROM v")[0]
        rep.check("big_int_plus_real", same(g, 9007199254740994.0), repr(g))
    guarded("big_int_plus_real", big_int_plus_real)

    def empty():
        values(con, [None, None])
        r = q(con, "SELECT gpu_sum(x), gpu_total(x), gpu_avg(x), gpu_max(x), gpu_min(x) FROM v")
        rep.check("empty", all(same(a, b) for a, b in zip(r, (None, 0.0, None, None, None))),
                  repr(r))
    guarded("empty", empty)

    def total_avg():
        values(con, [1, 2, 4])
        r = q(con, "SELECT gpu_total(x), gpu_avg(x), typeof(gpu_total(x)) FROM v")
        rep.check("total_avg", same(r[0], 7.0) and same(r[1], 7 / 3) and r[2] == "real", repr(r))
    guarded("total_avg", total_avg)

    def max_typeof():
        out = []
        for vals, want in (([5, 5.0], (5, "integer")), ([5.0, 5], (5.0, "real")),
                           ([9007199254740992.0, 9007199254740993], (9007199254740993, "integer")),
                           ([1, 2.5, -3], (2.5, "real"))):
            values(con, vals)
            r = q(con, "SELECT gpu_max(x), typeof(gpu_max(x)) FROM v")
            ok = same(r[0], want[0]) and r[1] == want[1]
            out.append(ok)
            if not ok:
                rep.check("max_typeof", False, f"{vals!r}: {r!r}, want {want!r}")
                return
        rep.check("max_typeof", all(out))
    guarded("max_typeof", max_typeof)

    def min_typeof():
        values(con, [3, -2.0, -2, None])
        r = q(con, "SELECT gpu_min(x), typeof(gpu_min(x)), min(x), typeof(min(x)) FROM v")
        rep.check("min_typeof", same(r[0], -2.0) and r[1] == "real" and same(r[0], r[2])
                  and r[1] == r[3], repr(r))
    guarded("min_typeof", min_typeof)

    def max_text_blob():
        values(con, [1, "abc", b"\x00\x01", "abd", 7.5])
        r = q(con, "SELECT gpu_max(x), max(x), gpu_min(x), min(x) FROM v")
        values(con, [1, "abc", "abd", 7.5])
        r2 = q(con, "SELECT gpu_max(x), max(x) FROM v")
        rep.check("max_text_blob", same(r[0], b"\x00\x01") and same(r[0], r[1])
                  and same(r[2], r[3]) and same(r2[0], "abd") and same(r2[0], r2[1]),
                  f"{r!r} {r2!r}")
    guarded("max_text_blob", max_text_blob)

    def params_bound():
        # Python values bound straight into the aggregate's argument
        g = q(con, "SELECT gpu_sum(x) FROM (SELECT ? AS x UNION ALL SELECT ? UNION ALL SELECT ?)",
              1e100, 1, -1e100)[0]
        rep.check("params_bound", same(g, 1.0), repr(g))
    guarded("params_bound", params_bound)

    def fsum_random():
        rnd = random.Random(int(os.environ.get("SEED", "7")))
        vals = [rnd.uniform(-1, 1) * 10.0 ** rnd.randint(-30, 30) for _ in range(200000)]
        values(con, vals)
        g, t = q(con, "SELECT gpu_sum(x), gpu_total(x) FROM v")
        want = math.fsum(vals)  # correctly rounded, as gpu_sum is
        rep.check("fsum_random", same(g, want) and same(t, want), f"{g!r} vs fsum {want!r}")
    guarded("fsum_random", fsum_random)

    def forced_gpu_same():
        # forced onto the GPU path with small chunks: without a GPU it falls
        # back to the CPU; either way the bits must not change
        base = q(con, "SELECT gpu_sum(x), gpu_max(x), gpu_avg(x) FROM v")
        c = connect()
        c.execute("CREATE TABLE v(k INTEGER PRIMARY KEY, x)")
        c.executemany("INSERT INTO v VALUES (?, ?)", con.execute("SELECT k, x FROM v"))
        c.execute("SELECT gpuagg_config('device', 'gpu')")
        c.execute("SELECT gpuagg_config('cpu_max_rows', 0)")
        c.execute("SELECT gpuagg_config('chunk_bytes', 65536)")
        r = q(c, "SELECT gpu_sum(x), gpu_max(x), gpu_avg(x) FROM v")
        rep.check("forced_gpu_same", all(same(a, b) for a, b in zip(base, r)), f"{base} {r}")
    guarded("forced_gpu_same", forced_gpu_same)

    def window_running():
        values(con, [1e100, 1.0, -1e100, 2.0])
        r = [x[0] for x in con.execute(
            "SELECT gpu_sum(x) OVER (ORDER BY k) FROM v ORDER BY k")]
        rep.check("window_running", all(same(a, b) for a, b in zip(r, [1e100, 1e100, 1.0, 3.0]))
                  and len(r) == 4, repr(r))
    guarded("window_running", window_running)

    def window_sliding():
        values(con, [1e100, 1.0, 2.0, 3, 4])
        r = [x for x in con.execute(
            "SELECT gpu_sum(x) OVER w, typeof(gpu_sum(x) OVER w) FROM v "
            "WINDOW w AS (ORDER BY k ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) ORDER BY k")]
        want = [(1e100, "real"), (1e100, "real"), (3.0, "real"), (5.0, "real"), (7, "integer")]
        rep.check("window_sliding", len(r) == 5 and all(
            same(a[0], b[0]) and a[1] == b[1] for a, b in zip(r, want)), repr(r))
    guarded("window_sliding", window_sliding)

    def window_max():
        vals = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3]
        values(con, vals)
        r = [x[0] for x in con.execute(
            "SELECT gpu_max(x) OVER (ORDER BY k ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) "
            "FROM v ORDER BY k")]
        want = [max(vals[max(0, i - 2):i + 1]) for i in range(len(vals))]
        rep.check("window_max", r == want, f"{r} want {want}")
    guarded("window_max", window_max)

    def group_by():
        values(con, [0.1] * 30)
        r = con.execute("SELECT k % 3, gpu_sum(x) FROM v GROUP BY 1 ORDER BY 1").fetchall()
        rep.check("group_by", r == [(0, 1.0), (1, 1.0), (2, 1.0)], repr(r))
    guarded("group_by", group_by)

    def info_json():
        info = json.loads(q(con, "SELECT gpuagg_info()")[0])
        rep.check("info_json", info.get("version") == q(con, "SELECT gpuagg_version()")[0]
                  and "gpu_usable" in info and "config" in info, repr(info)[:200])
    guarded("info_json", info_json)

    def two_connections():
        a, b = connect(), connect()
        default = q(b, "SELECT gpuagg_config('streams')")[0]
        a.execute("SELECT gpuagg_config('streams', 3)")
        sa = q(a, "SELECT gpuagg_config('streams')")[0]
        sb = q(b, "SELECT gpuagg_config('streams')")[0]
        a.close()
        r = q(b, "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 10) "
                 "SELECT gpu_sum(0.1) FROM s")[0]
        rep.check("two_connections", sa == 3 and sb == default != 3 and same(r, 1.0),
                  f"{sa} {sb} {default} {r!r}")
    guarded("two_connections", two_connections)

    def example():
        p = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "python_example.py"),
                            LIB], capture_output=True, text=True, timeout=60)
        rep.check("example", p.returncode == 0 and "gpu_sum() = 1.0" in p.stdout,
                  (p.stdout + p.stderr)[-300:])
    guarded("example", example)


def main():
    rep = Reporter()
    if not hasattr(sqlite3.Connection, "enable_load_extension"):
        why = (f"{sys.executable}'s sqlite3 module was built without extension loading; "
               "use /usr/bin/python3")
        for c in CHECKS:
            rep.skip(c, why)
        rep.finish()
    if not os.path.exists(LIB + ".so"):
        rep.check("load", False, f"{LIB}.so does not exist (run make)")
        rep.finish()
    print(f"# Python {sys.version.split()[0]}, SQLite {sqlite3.sqlite_version}, {LIB}.so")
    run(rep)
    rep.finish()


if __name__ == "__main__":
    main()
