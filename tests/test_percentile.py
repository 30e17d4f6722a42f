"""test_percentile.py — gpu_median, gpu_percentile, gpu_percentile_cont and
gpu_percentile_disc (issue 39, §2) against a model of SQLite's own
percentile extension (ext/misc/percentile.c as of 3.47;
sqlite.org/percentile.html), operation for operation:

  - P: scaled to a fraction by one division (P / 100 for percentile, P / 1
    for _cont and _disc; 0.5 for median), range-checked on every row, NULL-Y
    rows included, and compared with the first row's fraction within 0.001;
  - Y: NULL skipped, TEXT and BLOB refused (even '5'), +-Inf refused;
  - ix = frac * (n - 1), i1 = int(ix), i2 = i1 or i1 + 1, and the blend
    v1 + (v2 - v1) * (ix - i1) in Python floats (IEEE doubles, never fused);
    _disc: the value at i1, -0.0 before 0.0 (pct.c rule 4).

Checked, value, typeof and bits, or the error text:
  - random tables (ints beyond 2^53, reals over 2^+-1000, subnormals, +-0,
    runs of equal values, NULLs), random P (in and out of range, NULL,
    TEXT '50', slightly varying P within and past the tolerance), grouped
    and ungrouped, with DISTINCT, shuffled row orders giving the same bits;
  - window frames (ROWS, sliding and unbounded, with PARTITION BY) against
    the model over each frame;
  - the selection on inputs made to be hard: sorted, reversed, organ pipe,
    all equal, two values, many duplicates, 2e5 values;
  - the memory cap (group_bytes): an error naming the function;
  - every error text;
  - states: gpu_percentile_state merged by gpu_*_merge over random
    groupings and orders equal the aggregate bit for bit; canonical BLOBs;
    every kind of bad BLOB an error naming the merge.

Where a percentile.c of SQLite 3.47 or later is on this machine (the
variable PERCENTILE_C, or the pinned file below), the suite builds it as a
loadable extension with -ffp-contract=off and compares bit for bit; else
that check is a SKIP (no such file here: SQLite is 3.40).
"""

import hashlib
import math
import os
import random
import sqlite3
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gatest import Reporter, connect  # noqa: E402

SEED = int(os.environ.get("SEED", "39"))
CASES = int(os.environ.get("PCT_CASES", "700"))
rep = Reporter("percentile")
R = random.Random(SEED)

FNS = {  # name: (mx, discrete, takes P)
    "median": (1.0, False, False),
    "percentile": (100.0, False, True),
    "percentile_cont": (1.0, False, True),
    "percentile_disc": (1.0, True, True),
}

# SQLite 3.47's percentile.c (check-in of 2024-09, the first with _cont and
# _disc and the fraction tolerance on the scaled P): the reference build
# runs only on a file of this hash, so that no other version's bits count.
PINNED_SHA256 = os.environ.get("PERCENTILE_C_SHA256", "")


class Err(Exception):
    pass


def numeric_p(p):
    """sqlite3_value_numeric_type and _double of P: (is_number, value)."""
    if p is None:
        return False, 0.0
    if isinstance(p, bool):
        p = int(p)
    if isinstance(p, (int, float)):
        return True, float(p)
    if isinstance(p, str):
        s = p.strip()
        try:
            if s and all(c in "0123456789+-.eE" for c in s):
                return True, float(s)
        except ValueError:
            pass
        return False, 0.0
    return False, 0.0


def model(fn, rows, name=None):
    """SQLite's percentile over rows [(y, p)]: a float, None, or Err(text)."""
    mx, disc, takes_p = FNS[fn]
    name = name or "gpu_" + fn
    frac = None
    vals = []
    for y, p in rows:
        if takes_p:
            isnum, pv = numeric_p(p)
            f = pv / mx
            if not isnum or not (0.0 <= f <= 1.0):
                raise Err("the fraction argument to %s() is not between 0.0 and %.1f"
                          % (name, mx))
        else:
            f = 0.5
        if frac is None:
            frac = f
        else:
            d = frac - f
            if not (-0.001 <= d <= 0.001):
                raise Err("the fraction argument to %s() is not the same for all input rows"
                          % name)
        if y is None:
            continue
        if isinstance(y, bool) or not isinstance(y, (int, float)):
            raise Err("input to %s() is not numeric" % name)
        yf = float(y)
        if math.isinf(yf):
            raise Err("Inf input to %s()" % name)
        vals.append(yf)
    return answer(fn, frac, vals)


def answer(fn, frac, vals):
    if not vals:
        return None
    mx, disc, _ = FNS[fn]
    v = sorted(vals, key=lambda x: (x, 0 if math.copysign(1.0, x) < 0 else 1))
    n = len(v)
    ix = frac * float(n - 1)
    i1 = int(ix)
    if disc:
        return v[i1]
    i2 = i1 if (ix == float(i1) or i1 == n - 1) else i1 + 1
    v1, v2 = v[i1], v[i2]
    return v1 + (v2 - v1) * (ix - i1)


def bits(x):
    return struct.pack("<d", x)


def same(got, want):
    """got: (value, typeof) or Err; want: float, None or Err."""
    if isinstance(want, Err) or isinstance(got, Err):
        return isinstance(want, Err) and isinstance(got, Err) and str(got) == str(want)
    v, t = got
    if want is None:
        return v is None and t == "null"
    return t == "real" and isinstance(v, float) and bits(v) == bits(want)


def q(con, sql, params=()):
    try:
        return con.execute(sql, params).fetchall()
    except sqlite3.Error as e:
        return Err(str(e))


def call(fn, y="y", p="p"):
    return "gpu_%s(%s)" % (fn, y) if fn == "median" else "gpu_%s(%s, %s)" % (fn, y, p)


# ------------------------------------------------------------------ data

def gen_y(r, pool):
    k = r.randrange(16)
    if k == 0:
        return None
    if k == 1 and pool:
        return r.choice(pool)  # equal values
    if k == 2:
        return r.randint(-1000, 1000)
    if k == 3:
        return r.choice([(1 << 53) + 1, -(1 << 63), (1 << 63) - 1, (1 << 62) + 3])
    if k == 4:
        return r.uniform(-1, 1) * 2.0 ** r.randint(-1074, 1000)
    if k == 5:
        return r.choice([0.0, -0.0, 0, 5e-324, -5e-324, 1e308, -1e308])
    if k == 6:
        return r.choice([1e16, 1.0, -1e16, 0.1, 0.2, 0.3])
    return round(r.uniform(-100, 100), r.randrange(4))


def gen_p(r, fn, rowi, base):
    mx = FNS[fn][0]
    k = r.randrange(40)
    if rowi > 0 and k == 0:
        return base + r.choice([0.0004, -0.0009, 0.0011, 0.002]) * mx
    if rowi > 0 and k == 1:
        return r.choice([None, "abc", -1, mx * 1.5, str(base)])
    return base


def gen_base(r, fn):
    mx = FNS[fn][0]
    k = r.randrange(8)
    if k == 0:
        return r.choice([0, 0.0, mx, int(mx)])
    if k == 1:
        return r.choice([0.5 * mx, 0.25 * mx, 0.75 * mx, 0.9 * mx, 0.99 * mx])
    return r.random() * mx


def random_cases(con):
    con.execute("CREATE TABLE t(g INTEGER, y, p)")
    ok = bad = 0
    for case in range(CASES):
        fn = R.choice(list(FNS))
        n = R.choice([0, 1, 2, 3, 5, 10, 40, 200])
        pool = []
        rows = []
        base = gen_base(R, fn)
        ngroups = R.choice([1, 1, 3])
        for i in range(n):
            y = gen_y(R, pool)
            if y is not None and R.random() < 0.3:
                pool.append(y)
            if R.random() < 0.01:
                y = R.choice(["5", b"\x01", float("inf"), -float("inf"), "x"])
            rows.append((R.randrange(ngroups), y, gen_p(R, fn, i, base)))
        con.execute("DELETE FROM t")
        con.executemany("INSERT INTO t VALUES (?, ?, ?)", rows)
        # ungrouped, in rowid order
        want = _model(fn, [(y, p) for _, y, p in rows])
        got = q(con, "SELECT %s, typeof(%s) FROM t" % (call(fn), call(fn)))
        got = got if isinstance(got, Err) else got[0]
        good = same(got, want)
        # reversed order: the same bits (the model is order-free but for
        # which P is first and which error comes first)
        if not isinstance(want, Err):
            got2 = q(con, "SELECT %s, typeof(%s) FROM (SELECT * FROM t ORDER BY rowid DESC)"
                     % (call(fn), call(fn)))
            want2 = _model(fn, [(y, p) for _, y, p in reversed(rows)])
            got2 = got2 if isinstance(got2, Err) else got2[0]
            good = good and same(got2, want2)
        # grouped
        gq = q(con, "SELECT g, %s, typeof(%s) FROM t GROUP BY g ORDER BY g" % (call(fn), call(fn)))
        gw = {}
        for g in sorted({g for g, _, _ in rows}):
            gw[g] = _model(fn, [(y, p) for gg, y, p in rows if gg == g])
        if any(isinstance(w, Err) for w in gw.values()):
            good = good and isinstance(gq, Err)
        else:
            good = good and not isinstance(gq, Err) and len(gq) == len(gw) and all(
                same((v, t), gw[g]) for g, v, t in gq)
        if good:
            ok += 1
        else:
            bad += 1
            if bad <= 5:
                rep.check("random case %d (%s, n %d)" % (case, fn, n), False,
                          "got %r / %r want %r; rows %r" % (got, gq, want, rows[:12]))
    rep.check("random cases: %d of %d agree with the model" % (ok, CASES), bad == 0,
              "%d disagree" % bad)


def _model(fn, rows):
    try:
        return model(fn, rows)
    except Err as e:
        return e


def distinct_and_types(con):
    con.execute("CREATE TABLE d(y)")
    con.executemany("INSERT INTO d VALUES (?)", [(v,) for v in [3, 3, 3.0, 1, 2, 2, None, 10]])
    got = q(con, "SELECT gpu_median(DISTINCT y), typeof(gpu_median(DISTINCT y)) FROM d")
    want = model("median", [(v, None) for v in [3, 1, 2, 10]])  # 3 and 3.0: one
    rep.check("DISTINCT", not isinstance(got, Err) and same(got[0], want), repr(got))
    got = q(con, "SELECT gpu_median(y) FROM d WHERE 0")
    rep.check("empty: NULL", got == [(None,)], repr(got))
    got = q(con, "SELECT gpu_percentile_disc(y, 1), typeof(gpu_median(y)) FROM d WHERE y = 2")
    rep.check("integers give REAL", got == [(2.0, "real")], repr(got))
    got = q(con, "SELECT gpu_percentile(y, '50') FROM d")
    rep.check("P as TEXT '50' is a number", not isinstance(got, Err)
              and same((got[0][0], "real"), model("percentile", [(v, "50") for v in
                                                                  [3, 3, 3.0, 1, 2, 2, None, 10]])),
              repr(got))


def errors(con):
    con.execute("CREATE TABLE e(y, p)")
    con.executemany("INSERT INTO e VALUES (?, ?)", [(1, 50), (None, 50), (2, 50)])
    cases = [
        ("SELECT gpu_percentile(y, 101) FROM e",
         "the fraction argument to gpu_percentile() is not between 0.0 and 100.0"),
        ("SELECT gpu_percentile_cont(y, 1.5) FROM e",
         "the fraction argument to gpu_percentile_cont() is not between 0.0 and 1.0"),
        ("SELECT gpu_percentile_disc(y, -0.1) FROM e",
         "the fraction argument to gpu_percentile_disc() is not between 0.0 and 1.0"),
        ("SELECT gpu_percentile(y, NULL) FROM e",
         "the fraction argument to gpu_percentile() is not between 0.0 and 100.0"),
        ("SELECT gpu_percentile(y, 'x') FROM e",
         "the fraction argument to gpu_percentile() is not between 0.0 and 100.0"),
        ("SELECT gpu_percentile(y, CASE WHEN y IS NULL THEN 51 ELSE 50 END) FROM e",
         "the fraction argument to gpu_percentile() is not the same for all input rows"),
        ("SELECT gpu_percentile_cont(y, CASE WHEN y = 2 THEN 0.5011 ELSE 0.5 END) FROM e",
         "the fraction argument to gpu_percentile_cont() is not the same for all input rows"),
        ("SELECT gpu_median('5')", "input to gpu_median() is not numeric"),
        ("SELECT gpu_median(x'05')", "input to gpu_median() is not numeric"),
        ("SELECT gpu_percentile_disc(9e999, 0.5)", "Inf input to gpu_percentile_disc()"),
        ("SELECT gpu_median(-9e999)", "Inf input to gpu_median()"),
    ]
    for sql, want in cases:
        got = q(con, sql)
        rep.check("error: " + sql, isinstance(got, Err) and str(got) == want, repr(got))
    # within the tolerance: no error, the first row's P counts
    got = q(con, "SELECT gpu_percentile_cont(y, CASE WHEN y = 2 THEN 0.5009 ELSE 0.5 END) FROM e")
    rep.check("P within 0.001 of the first row's", got == [(1.5,)], repr(got))
    # the P check runs on a NULL-Y row before any Y
    got = q(con, "SELECT gpu_percentile(NULL, 200)")
    rep.check("P checked on a NULL-Y row", isinstance(got, Err), repr(got))
    # the memory cap: group_bytes
    con.execute("SELECT gpuagg_config('group_bytes', 4096)")
    series = ("WITH RECURSIVE s(value) AS (SELECT 1 UNION ALL SELECT value + 1 FROM s "
              "WHERE value < %d) ")
    got = q(con, series % 2000 + "SELECT gpu_median(value) FROM s")
    rep.check("memory cap: an error naming the function", isinstance(got, Err)
              and str(got).startswith("gpu_median: the values passed the memory cap")
              and "group_bytes" in str(got), repr(got))
    got = q(con, series % 500 + "SELECT gpu_median(value) FROM s")
    rep.check("under the cap: the answer", got == [(250.5,)], repr(got))
    con.execute("SELECT gpuagg_config('group_bytes', 0)")


def hard_inputs(con):
    n = 200001 if os.environ.get("PCT_BIG", "1") == "1" else 20001
    shapes = {
        "sorted": list(range(n)),
        "reversed": list(range(n, 0, -1)),
        "organ pipe": list(range(n // 2)) + list(range(n // 2, -1, -1)),
        "all equal": [7.5] * n,
        "two values": [R.choice([1.0, 2.0]) for _ in range(n)],
        "few values": [R.randrange(5) for _ in range(n)],
        "random": [R.random() for _ in range(n)],
        "zeros": [R.choice([0.0, -0.0]) for _ in range(2001)],
    }
    # median-of-three killer (Musser's sequence) for the introselect fallback
    k = n // 2
    killer = [0] * (2 * k)
    for i in range(1, k + 1):
        if i % 2 == 1:
            killer[i - 1] = i
            killer[i] = k + i
        killer[k + i - 1] = 2 * i
    shapes["median-of-3 killer"] = killer
    con.execute("CREATE TABLE h(y)")
    for name, vals in shapes.items():
        con.execute("DELETE FROM h")
        con.executemany("INSERT INTO h VALUES (?)", [(v,) for v in vals])
        for fn, p in (("median", None), ("percentile", 33.3), ("percentile_cont", 0.999),
                      ("percentile_disc", 0.5), ("percentile_disc", 0.0001)):
            got = q(con, "SELECT %s FROM h" % call(fn, "y", repr(p)))
            want = _model(fn, [(v, p) for v in vals])
            rep.check("hard input %s: %s(%r)" % (name, fn, p),
                      not isinstance(got, Err) and same((got[0][0], "real"), want),
                      "got %r want %r" % (got, want))


def windows(con):
    con.execute("CREATE TABLE w(k INTEGER PRIMARY KEY, g, y)")
    rows = []
    pool = []
    for i in range(1, 161):
        y = gen_y(R, pool)
        if y is not None and R.random() < 0.4:
            pool.append(y)
        rows.append((i, R.randrange(3), y))
    con.executemany("INSERT INTO w VALUES (?, ?, ?)", rows)
    frames = [(1, 1), (3, 0), (0, 5), (7, 2), (None, 0), (0, None), (2, None), (None, None)]
    bad = 0
    total = 0
    for fn in FNS:
        p = {"median": None, "percentile": 37.5, "percentile_cont": 0.8,
             "percentile_disc": 0.4}[fn]
        for a, b in frames:
            for part in (False, True):
                fa = "UNBOUNDED PRECEDING" if a is None else "%d PRECEDING" % a
                fb = "UNBOUNDED FOLLOWING" if b is None else "%d FOLLOWING" % b
                sql = ("SELECT k, %s OVER (%sORDER BY k ROWS BETWEEN %s AND %s) FROM w ORDER BY k"
                       % (call(fn, "y", repr(p)), "PARTITION BY g " if part else "", fa, fb))
                got = q(con, sql)
                total += 1
                if isinstance(got, Err):
                    bad += 1
                    rep.check("window " + sql, False, str(got))
                    continue
                ok = True
                for k, v in got:
                    mine = [r for r in rows if not part or r[1] == rows[k - 1][1]]
                    idx = [r[0] for r in mine].index(k)
                    lo = 0 if a is None else max(0, idx - a)
                    hi = len(mine) if b is None else min(len(mine), idx + b + 1)
                    want = _model(fn, [(r[2], p) for r in mine[lo:hi]])
                    if not (want is None and v is None) and not (
                            isinstance(v, float) and isinstance(want, float)
                            and bits(v) == bits(want)):
                        ok = False
                        break
                if not ok:
                    bad += 1
                    rep.check("window " + sql, False, "row %d got %r want %r" % (k, v, want))
    rep.check("window frames: %d queries agree with the model over each frame" % total,
              bad == 0, "%d disagree" % bad)


def states(con):
    """gpu_percentile_state / gpu_*_merge: states merged in random trees
    (nested merges of states of states are not a thing: a merge gives the
    answer, so a tree is any split of the rows into groups, and merges over
    any subset order) equal the aggregate over all the rows, bit for bit;
    the BLOB is canonical; bad BLOBs are errors naming the merge."""
    con.execute("CREATE TABLE st(g INTEGER, y)")
    bad = 0
    for case in range(120):
        n = R.choice([0, 1, 2, 9, 60, 300])
        pool = []
        rows = []
        for i in range(n):
            y = gen_y(R, pool)
            if y is not None and R.random() < 0.3:
                pool.append(y)
            rows.append((R.randrange(R.choice([1, 2, 5, 40])), y))
        con.execute("DELETE FROM st")
        con.executemany("INSERT INTO st VALUES (?, ?)", rows)
        order = R.choice(["g", "g DESC", "random()", "total(y)"])
        for fn in FNS:
            p = gen_base(R, fn)
            args = "s" if fn == "median" else "s, %r" % p
            merged = q(con, "SELECT gpu_%s_merge(%s), typeof(gpu_%s_merge(%s)) FROM (SELECT "
                       "gpu_percentile_state(y) s FROM st GROUP BY g ORDER BY %s)"
                       % (fn, args, fn, args, order))
            direct = q(con, "SELECT %s, typeof(%s) FROM st" % (call(fn, "y", repr(p)),
                                                                call(fn, "y", repr(p))))
            want = _model(fn, [(y, p) for _, y in rows])
            ok = (not isinstance(merged, Err) and not isinstance(direct, Err)
                  and same(merged[0], want) and same(direct[0], want))
            if not ok:
                bad += 1
                if bad <= 3:
                    rep.check("states case %d %s" % (case, fn), False, "merged %r direct %r want %r"
                              % (merged, direct, want))
    rep.check("states merged over random groupings equal the aggregate", bad == 0, "%d differ" % bad)
    a = q(con, "SELECT hex(gpu_percentile_state(y)) FROM (SELECT column1 AS y FROM "
          "(VALUES (3), (-0.0), (1.5), (0.0), (NULL)))")
    b = q(con, "SELECT hex(gpu_percentile_state(y)) FROM (SELECT column1 AS y FROM "
          "(VALUES (0.0), (1.5), (NULL), (3.0), (-0.0)))")
    rep.check("state BLOB canonical", not isinstance(a, Err) and a == b, "%r %r" % (a, b))
    def blob(n, *vals, tail=""):
        return "x'4741535401060000%s%s%s'" % (struct.pack("<Q", n).hex(),
                                               "".join(struct.pack("<d", v).hex() for v in vals), tail)
    for b, want in (
            ("'abc'", "gpu_median_merge: expects a state BLOB made by gpu_percentile_state()"),
            ("x'474153540101000000'", "gpu_median_merge: wrong kind of state: this is a sum state "
                                      "(gpu_sum/total/avg_state)"),
            ("x'4741535402060000'", "gpu_median_merge: state made by a newer gpuagg (format version > 1); "
                                    "upgrade gpuagg to read it"),
            (blob(2, 1.0), "gpu_median_merge: truncated state"),
            (blob(2, 1.0, 0.5), "gpu_median_merge: malformed state (values out of order)"),
            (blob(2, 0.0, -0.0), "gpu_median_merge: malformed state (values out of order)"),
            (blob(1, float("inf")), "gpu_median_merge: malformed state (a value that is not finite)"),
            (blob(1, 1.0, tail="00"), "gpu_median_merge: malformed state (bytes after its values)"),
            ("x'4741535401060100'", "gpu_median_merge: malformed state (reserved header bytes)")):
        got = q(con, "SELECT gpu_median_merge(%s)" % b)
        rep.check("bad state %s: %s" % (b[:60], want[18:]), isinstance(got, Err) and str(got) == want,
                  repr(got))
    got = q(con, "SELECT gpu_median_merge(%s), gpu_median_merge(%s)" % (blob(1, 1.0), blob(0)))
    rep.check("hand-made states of 1.0 and of nothing", got == [(1.0, None)], repr(got))
    got = q(con, "SELECT gpu_percentile_merge(NULL, 200)")
    rep.check("merge: P checked on a NULL state's row", isinstance(got, Err), repr(got))


def reference_build():
    """Rule: a >= 3.47 percentile.c, pinned by hash, built with
    -ffp-contract=off, bit for bit against ours.  SKIP where none is here."""
    path = os.environ.get("PERCENTILE_C", "")
    if not path or not os.path.exists(path):
        rep.skip("SQLite's own percentile.c (>= 3.47) bit for bit",
                 "no percentile.c on this machine (set PERCENTILE_C and "
                 "PERCENTILE_C_SHA256)")
        return
    data = open(path, "rb").read()
    digest = hashlib.sha256(data).hexdigest()
    if not PINNED_SHA256 or digest != PINNED_SHA256 or b"percentile_disc" not in data:
        rep.skip("SQLite's own percentile.c bit for bit",
                 "%s has sha256 %s, not the pinned one" % (path, digest))
        return
    tmp = tempfile.mkdtemp(prefix="gpuagg_pct_")
    so = os.path.join(tmp, "percentile.so")
    r = subprocess.run(["cc", "-O2", "-ffp-contract=off", "-fPIC", "-shared", "-o", so, path],
                       capture_output=True, text=True)
    if r.returncode:
        rep.check("build SQLite's percentile.c", False, r.stderr[-400:])
        return
    con = connect()
    con.load_extension(so[:-3])
    con.execute("CREATE TABLE t(y)")
    bad = 0
    for case in range(300):
        vals = [gen_y(R, []) for _ in range(R.choice([1, 2, 7, 100]))]
        con.execute("DELETE FROM t")
        con.executemany("INSERT INTO t VALUES (?)", [(v,) for v in vals])
        for fn in FNS:
            p = gen_base(R, fn)
            a = q(con, "SELECT %s FROM t" % call(fn, "y", repr(p)))
            b = q(con, "SELECT %s FROM t" % (call(fn, "y", repr(p))[4:]))
            ok = (isinstance(a, Err) and isinstance(b, Err)) or (
                not isinstance(a, Err) and not isinstance(b, Err)
                and (a[0][0] is None) == (b[0][0] is None)
                and (a[0][0] is None or bits(a[0][0]) == bits(b[0][0])
                     or (fn == "percentile_disc" and a[0][0] == 0.0 == b[0][0])))
            bad += not ok
    rep.check("SQLite's own percentile.c: the same bits", bad == 0, "%d differ" % bad)


def hpct_total_key(v):
    """pct_state.c rule 2's order: by value, -0.0 before 0.0."""
    return (v, math.copysign(1.0, v))


def hpct_state_sort(con):
    """Issue 39 (session 5): gpu_percentile_state's sort (pct_state.c rule
    5, a radix sort that polls the interrupt): large states are canonical
    (the values in rule 2's order, byte for byte against Python's sort), and
    the caller's interrupt stops the sort of a final with 2e5 values, where
    the base build's qsort ran to its end."""
    r = random.Random(SEED + 5)
    bad = 0
    for case in range(12):
        n = r.choice([63, 64, 65, 2047, 2049, 5000, 40000])
        pool = [0.0, -0.0, 5e-324, -5e-324, 1e308, -1e308, 2.0 ** 53 + 2, -1.5, 3.0]
        vals = [r.choice(pool) if r.random() < 0.3 else
                r.choice([r.uniform(-1e3, 1e3), math.ldexp(r.random(), r.randint(-1070, 1020)),
                          -math.ldexp(r.random(), r.randint(-1070, 1020)), float(r.randint(-9, 9))])
                for _ in range(n)]
        con.execute("DROP TABLE IF EXISTS hs")
        con.execute("CREATE TABLE hs(y)")
        con.executemany("INSERT INTO hs VALUES (?)", [(v,) for v in vals])
        got = con.execute("SELECT gpu_percentile_state(y) FROM hs").fetchone()[0]
        vals = [v for (v,) in con.execute("SELECT y FROM hs")]  # as SQLite reads them (-0.0 stored as 0)
        want = b"GAST\x01\x06\x00\x00" + struct.pack("<Q", n) + b"".join(
            struct.pack("<d", v) for v in sorted(vals, key=hpct_total_key))
        bad += got != want
    rep.check("hpct: large states are canonical (radix sort)", bad == 0, "%d of 12 differ" % bad)
    # the sort polls the caller's interrupt (ga_intr_check: its first poll
    # always runs the progress probe, ~4,300 VM steps on the connection):
    # a progress handler of period 1,000, counting only after the last row
    # was stepped (the final's work), is called several times by the poll
    # and at most once by the few VM steps after the last row.  Counters,
    # not time; then the interrupt itself, set at the last row, stops it.
    n = 200000
    con.execute("DROP TABLE IF EXISTS hs")
    con.execute("CREATE TABLE hs(y REAL)")
    con.execute("WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < %d) "
                "INSERT INTO hs SELECT ((i * 7919) %% 100003) * 0.25 FROM c" % n)
    armed, calls = [False], [0]

    def handler():
        calls[0] += armed[0]
        return 0

    def arm(y, i):
        if i == n:
            armed[0] = True
        return y

    con.create_function("hpct_arm", 2, arm)
    con.set_progress_handler(handler, 1000)
    for fn, what in (("gpu_percentile_state(hpct_arm(y, rowid))", "state's sort"),
                     ("gpu_median(hpct_arm(y, rowid))", "median's selection (control)")):
        armed[0], calls[0] = False, 0
        got = q(con, "SELECT length(%s) FROM hs" % fn)
        rep.check("hpct: the %s polls the interrupt" % what, not isinstance(got, Err) and calls[0] >= 3,
                  "progress handler calls after the last row: %d (%r)" % (calls[0], got))
    con.set_progress_handler(None, 0)
    con.create_function("hpct_arm", 2, lambda y, i: (con.interrupt() if i == n else None, y)[1])
    got = q(con, "SELECT length(gpu_percentile_state(hpct_arm(y, rowid))) FROM hs")
    rep.check("hpct: the interrupt at the last row stops the state", isinstance(got, Err) and
              str(got) == "interrupted", repr(got)[:200])
    con.execute("DROP TABLE hs")


def hpct_cache(rep_con_path):
    """Issue 39 (session 5): medians and percentiles from a host entry of the
    column cache (engine/cache/cache_pct.c) at 1, 2 and 4 threads, grouped
    by a dense column, by an expression (hashed) and not at all, with
    FILTER, WHERE and tiny groups: the same bits as SQLite's own text on the
    connection, last_scan.path 'cache'; an infinity declines (SQLite's
    error, why saying so); group_bytes declines (why saying so)."""
    import json
    path = rep_con_path
    if os.path.exists(path):
        os.unlink(path)
    con = connect(path)
    con.execute("SELECT gpuagg_config('scan_min_rows', 0)")
    con.execute("SELECT gpuagg_config('device', 'cpu')")
    r = random.Random(SEED + 55)
    con.execute("CREATE TABLE hc(id INTEGER PRIMARY KEY, g INTEGER, m TEXT, x REAL, y INTEGER, k INTEGER)")
    rows = []
    for i in range(1, 30001):
        c = r.randrange(10)
        x = (None if c == 0 else r.choice([0.0, -0.0, 2.5, 5e-324, -1e300, 7.0]) if c < 3
             else round(r.uniform(-1e4, 1e4), r.randrange(4)))
        y = None if c == 1 else r.choice([r.randint(-20, 20), (1 << 53) + r.randint(1, 9), -(1 << 62)])
        rows.append((i, r.randrange(7), r.choice(["AIR", "MAIL", "RAIL", "SHIP", "TRUCK", "FOB", "REG AIR"]),
                     x, y, i))
    con.execute("BEGIN")
    con.executemany("INSERT INTO hc VALUES (?,?,?,?,?,?)", rows)
    con.execute("COMMIT")
    con.execute("SELECT gpu_cache('hc', 'g, m, x, y, k')")

    def ask(text, th):
        con.execute("SELECT gpuagg_config('threads', ?)", (th,))
        con.execute("DROP TABLE IF EXISTS temp.hq")
        con.execute("CREATE VIRTUAL TABLE temp.hq USING gpu_query('%s')" % text.replace("'", "''"))
        try:
            got = con.execute("SELECT * FROM temp.hq").fetchall()
        except sqlite3.Error as e:
            got = Err(str(e))
        ls = json.loads(con.execute("SELECT gpuagg_info()").fetchone()[0]).get("last_scan") or {}
        return got, ls

    def key(rows):
        return sorted((tuple(struct.pack("<d", v).hex() if isinstance(v, float) else repr(v) for v in row)
                       for row in rows))

    bad = cached = runs = 0
    whys = []
    for qi in range(40):
        keys = r.choice([[], ["g"], ["m"], ["g % 3"], ["g", "m"], ["k % 1000"]])
        aggs = []
        for _ in range(r.randint(1, 3)):
            fn = r.choice(list(FNS))
            e = r.choice(["x", "y", "x + y", "-x"])
            a = ("gpu_median(%s)" % e if fn == "median" else
                 "gpu_%s(%s, %r)" % (fn, e, r.choice([0, 1, 0.5, 0.25, 0.999]) * (100 if fn == "percentile" else 1)))
            if r.random() < 0.2:
                a += " FILTER (WHERE g > %d)" % r.randint(0, 5)
            aggs.append(a)
        if r.random() < 0.3:
            aggs.append(r.choice(["count(*)", "gpu_sum(x)", "max(y)"]))
        text = "SELECT %s FROM hc" % ", ".join(keys + aggs)
        if r.random() < 0.3:
            text += " WHERE x > %d" % r.randint(-5000, 5000)
        if keys:
            text += " GROUP BY " + ", ".join(keys)
        want = q(con, text)
        for th in (1, 2, 4):
            got, ls = ask(text, th)
            runs += 1
            cached += ls.get("path") == "cache"
            if ls.get("path") != "cache":
                whys.append((text, ls.get("why")))
            ok = (isinstance(got, Err) and isinstance(want, Err) and str(got) == "gpu_query: " + str(want)) or \
                 (not isinstance(got, Err) and not isinstance(want, Err) and key(got) == key(want))
            if not ok:
                bad += 1
                if bad <= 3:
                    rep.check("hpct cache %s threads %d" % (text, th), False, "got %r want %r (%r)"
                              % (got if isinstance(got, Err) else got[:4],
                                 want if isinstance(want, Err) else want[:4], ls.get("why")))
    rep.check("hpct: host cache medians equal SQLite's text (%d runs)" % runs, bad == 0, "%d differ" % bad)
    rep.check("hpct: the host cache answered them", cached == runs, "%d of %d from the cache (%r)"
              % (cached, runs, whys[:3]))
    # group_bytes: the values past it decline, saying so; the scan raises its own error
    con.execute("SELECT gpuagg_config('group_bytes', 50000)")
    got, ls = ask("SELECT g, gpu_median(x) FROM hc GROUP BY g", 2)
    rep.check("hpct: group_bytes declines the host cache", ls.get("path") != "cache" and
              "the medians' values would pass group_bytes" in (ls.get("why") or ""), repr((got if isinstance(got, Err) else got[:2], ls.get("why"))))
    # the groups' arrays cross it first (one thread, a cap below them): the
    # same reason, not the threads' timing's (the flaky check above, before)
    for cap in (64, 512):
        con.execute("SELECT gpuagg_config('group_bytes', ?)", (cap,))
        got, ls = ask("SELECT k % 1000, gpu_median(x) FROM hc GROUP BY 1", 1)
        rep.check("hpct: group_bytes %d below the groups' arrays: the medians' reason" % cap,
                  ls.get("path") != "cache" and
                  "the medians' values would pass group_bytes" in (ls.get("why") or ""),
                  repr(ls.get("why")))
    con.execute("SELECT gpuagg_config('group_bytes', 0)")
    # an infinity: SQLite's error, the cache declining with why
    con.execute("UPDATE hc SET x = 9e999 WHERE id = 777")
    con.execute("SELECT gpu_cache('hc', 'g, m, x, y, k')")
    text = "SELECT g, gpu_percentile_cont(x, 0.5) FROM hc GROUP BY g"
    want = q(con, text)
    got, ls = ask(text, 2)
    rep.check("hpct: an infinity declines the host cache; SQLite's error",
              isinstance(got, Err) and isinstance(want, Err) and str(got) == "gpu_query: " + str(want) and
              "infinity" in (ls.get("why") or "") + str(ls.get("cache_why") or "") or
              (isinstance(got, Err) and "Inf input" in str(got)),
              repr((got, want, ls.get("path"), ls.get("why"))))
    con.close()
    for suffix in ("", "-wal", "-shm", "-journal"):
        if os.path.exists(path + suffix):
            os.unlink(path + suffix)


def hpct_partial_values(path):
    """Issue 39 (session 5): a median's partial (qpartial.h rule 9) refuses
    values out of rule 2's order and more values than rows, as a damaged
    partial naming the merge; the partial as written is accepted."""
    if os.path.exists(path):
        os.unlink(path)
    con = connect(path)
    con.execute("SELECT gpuagg_config('scan_min_rows', 0)")
    con.execute("CREATE TABLE m(x REAL)")
    con.executemany("INSERT INTO m VALUES (?)", [(2.5,), (None,), (-1.0,), (7.0,), (0.0,)])
    try:
        p = con.execute("SELECT gpu_query_partial('SELECT gpu_median(x) FROM m')").fetchone()[0]
    except sqlite3.Error as e:
        rep.check("hpct: a median's partial", False, str(e))
        con.close()
        return
    at = len(p) - 8 * 5  # u64 n, then the 4 values

    def merge(vs, n=None):
        b = p[:at] + struct.pack("<Q", len(vs) if n is None else n) + b"".join(struct.pack("<d", v) for v in vs)
        got = q(con, "SELECT length(gpu_query_merge(x'%s'))" % b.hex())
        return str(got) if isinstance(got, Err) else "ok"
    bad = "gpu_query_merge: argument 1: a damaged partial (a median's or percentile's values)"
    got = [merge([-1.0, 0.0, 2.5, 7.0]), merge([0.0, -1.0, 2.5, 7.0]), merge([-1.0, 0.0, 2.5, 7.0, 8.0, 9.0]),
           merge([-1.0, 0.0, 2.5, 7.0], n=5)]
    rep.check("hpct: a median's partial: its values checked", got == ["ok", bad, bad, bad], repr(got))
    con.close()
    for suffix in ("", "-wal", "-shm", "-journal"):
        if os.path.exists(path + suffix):
            os.unlink(path + suffix)


def hpct_join_cache(path):
    """Issue 39 (session 5): a star join's medians from host entries
    (planner/cache_join.c runs the host query over the joined entry): each
    group keeps its values (cache_pct.c), the same bits as SQLite's text.
    The base build took the median's value for a DISTINCT set there and
    answered other numbers."""
    import json
    if os.path.exists(path):
        os.unlink(path)
    con = connect(path)
    con.execute("SELECT gpuagg_config('scan_min_rows', 0)")
    con.execute("SELECT gpuagg_config('device', 'cpu')")
    con.execute("CREATE TABLE f(k INTEGER, x REAL)")
    con.execute("CREATE TABLE d(k INTEGER PRIMARY KEY, g INTEGER)")
    r = random.Random(SEED + 56)
    con.execute("BEGIN")
    con.executemany("INSERT INTO f VALUES (?, ?)", [(r.randrange(50), r.choice([None, -0.0, 0.0, r.uniform(-9, 9)]))
                                                     for _ in range(20000)])
    con.executemany("INSERT INTO d VALUES (?, ?)", [(i, i % 4) for i in range(50)])
    con.execute("COMMIT")
    con.execute("SELECT gpu_cache('f')")
    con.execute("SELECT gpu_cache('d')")
    text = ("SELECT d.g, gpu_median(f.x), gpu_percentile_disc(f.x, 0.3), count(*) FROM f JOIN d ON f.k = d.k "
            "GROUP BY d.g ORDER BY d.g")
    want = con.execute(text).fetchall()
    con.execute("CREATE VIRTUAL TABLE temp.jq USING gpu_query('%s')" % text.replace("'", "''"))
    bad = []
    for th in (1, 2, 4):
        con.execute("SELECT gpuagg_config('threads', ?)", (th,))
        got = q(con, "SELECT * FROM temp.jq")
        ls = json.loads(con.execute("SELECT gpuagg_info()").fetchone()[0]).get("last_scan") or {}
        if isinstance(got, Err) or [tuple(map(repr, g)) for g in got] != [tuple(map(repr, w)) for w in want] or \
                ls.get("path") != "cache":
            bad.append((th, ls.get("path"), got if isinstance(got, Err) else got[:2], want[:2]))
    rep.check("hpct: a star join's medians from host entries", not bad, repr(bad)[:600])
    con.close()
    for suffix in ("", "-wal", "-shm", "-journal"):
        if os.path.exists(path + suffix):
            os.unlink(path + suffix)


def main():
    con = connect()
    random_cases(con)
    distinct_and_types(con)
    errors(con)
    hard_inputs(con)
    windows(con)
    states(con)
    hpct_state_sort(con)  # issue 39 (session 5)
    hpct_cache(os.path.join(tempfile.gettempdir(), "hpct_cache_%d.db" % os.getpid()))
    hpct_partial_values(os.path.join(tempfile.gettempdir(), "hpct_part_%d.db" % os.getpid()))
    hpct_join_cache(os.path.join(tempfile.gettempdir(), "hpct_join_%d.db" % os.getpid()))
    reference_build()
    rep.finish()


if __name__ == "__main__":
    main()
